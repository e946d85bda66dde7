//! The 100-byte database header at the start of page 1.
//!
//! What the reader uses of it: the magic string, the page size (bytes 16–17, big-endian; 1 means
//! 65,536), the bytes reserved at the end of each page (byte 20), the read/write versions (bytes
//! 18/19: 1 = rollback journal, 2 = WAL), the page count (bytes 28–31, trusted only when the
//! change counter at 24 equals the "version valid for" number at 92, as SQLite itself does), and
//! the text encoding (byte 56: 1 UTF-8, 2 UTF-16le, 3 UTF-16be). The payload fractions (bytes
//! 21–23) must be 64/32/32: every SQLite since 3.0 writes these, and the overflow rules depend
//! on them.

use super::DbError;

/// The 16 bytes every SQLite 3 database starts with.
pub const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Bytes of the header.
pub const HEADER_BYTES: usize = 100;

/// What the header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Page size in bytes (a power of two, 512 to 65,536).
    pub page_size: u32,
    /// Bytes at the end of each page that hold no b-tree data (extensions' space).
    pub reserved: u8,
    /// Usable bytes of a page: `page_size − reserved`.
    pub usable: u32,
    /// Pages in the database.
    pub page_count: u32,
    /// True when the file is in WAL mode (bytes 18/19 = 2): newer pages may sit in `<file>-wal`.
    pub wal_mode: bool,
    /// The text encoding byte (1 = UTF-8; 0 in a database that has never held text).
    pub encoding: u32,
}

fn be16(b: &[u8], i: usize) -> u32 {
    match b.get(i..i + 2) {
        Some(s) => u32::from(u16::from_be_bytes([s[0], s[1]])),
        None => 0,
    }
}

fn be32(b: &[u8], i: usize) -> u32 {
    match b.get(i..i + 4) {
        Some(s) => u32::from_be_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

/// Parses the header `b` (the first bytes of the file) of a file of `file_len` bytes.
pub fn parse(b: &[u8], file_len: u64) -> Result<Header, DbError> {
    if file_len == 0 {
        return Err(DbError::at(
            0,
            "empty file: not an SQLite database (expected the header \"SQLite format 3\\x00\")",
        ));
    }
    if !b.starts_with(MAGIC) {
        // The first 16 bytes (as long as the header sought), and how much of the file follows.
        let shown = b.get(..16).unwrap_or(b);
        let after = file_len.saturating_sub(shown.len() as u64);
        return Err(DbError::at(
            0,
            format!(
                "not an SQLite 3 database: expected the header \"SQLite format 3\\x00\" at byte 0, \
                 found {}",
                crate::quote::quote_part(shown, crate::quote::SHORT, after)
            ),
        ));
    }
    if b.len() < HEADER_BYTES {
        return Err(DbError::at(
            b.len() as u64,
            format!(
                "the file ends after {} bytes, inside the 100-byte SQLite header: the file is \
                 truncated",
                b.len()
            ),
        ));
    }
    let raw = be16(b, 16);
    let page_size = if raw == 1 { 65_536 } else { raw };
    if !(512..=65_536).contains(&page_size) || !page_size.is_power_of_two() {
        return Err(DbError::at(
            16,
            format!("page size {raw} in the header: expected a power of two from 512 to 65536"),
        ));
    }
    let (write_v, read_v) = (b[18], b[19]);
    if read_v > 2 {
        return Err(DbError::at(
            19,
            format!(
                "file format read version {read_v}: written by an SQLite whose format this reader \
                 does not know (expected 1 or 2)"
            ),
        ));
    }
    let reserved = b[20];
    let usable = page_size - u32::from(reserved);
    if usable < 480 {
        return Err(DbError::at(
            20,
            format!(
                "{reserved} reserved bytes per page leave {usable} usable bytes of a \
                 {page_size}-byte page; SQLite needs at least 480"
            ),
        ));
    }
    if (b[21], b[22], b[23]) != (64, 32, 32) {
        return Err(DbError::at(
            21,
            format!(
                "payload fractions {}/{}/{} in the header: every SQLite 3 writes 64/32/32",
                b[21], b[22], b[23]
            ),
        ));
    }
    let encoding = be32(b, 56);
    if encoding > 1 {
        let name = match encoding {
            2 => "UTF-16le".to_string(),
            3 => "UTF-16be".to_string(),
            n => format!("unknown ({n})"),
        };
        return Err(DbError::at(
            56,
            format!(
                "text encoding {name}: this reader reads UTF-8 databases (what the profilers \
                 write)"
            ),
        ));
    }
    let pages_in_file = u32::try_from(file_len / u64::from(page_size)).unwrap_or(u32::MAX);
    let in_header = be32(b, 28);
    let trusted = in_header != 0 && be32(b, 24) == be32(b, 92);
    let page_count = if trusted { in_header } else { pages_in_file };
    let need = u64::from(page_count) * u64::from(page_size);
    if need > file_len {
        return Err(DbError::at(
            file_len,
            format!(
                "the file is truncated: its header says {page_count} pages of {page_size} bytes \
                 ({need} bytes), the file has {file_len} bytes"
            ),
        ));
    }
    Ok(Header {
        page_size,
        reserved,
        usable,
        page_count,
        wal_mode: write_v == 2 || read_v == 2,
        encoding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(page: u16, count: u32) -> Vec<u8> {
        let mut b = vec![0u8; 100];
        b[..16].copy_from_slice(MAGIC);
        b[16..18].copy_from_slice(&page.to_be_bytes());
        b[18] = 1;
        b[19] = 1;
        b[21] = 64;
        b[22] = 32;
        b[23] = 32;
        b[24..28].copy_from_slice(&7u32.to_be_bytes());
        b[28..32].copy_from_slice(&count.to_be_bytes());
        b[56..60].copy_from_slice(&1u32.to_be_bytes());
        b[92..96].copy_from_slice(&7u32.to_be_bytes());
        b
    }

    #[test]
    fn reads_a_valid_header() {
        let h = parse(&header(4096, 3), 3 * 4096).unwrap();
        assert_eq!((h.page_size, h.usable, h.page_count), (4096, 4096, 3));
        assert!(!h.wal_mode);
        // Page size 1 means 65536.
        assert_eq!(parse(&header(1, 1), 65_536).unwrap().page_size, 65_536);
    }

    #[test]
    fn untrusted_page_count_comes_from_the_file_length() {
        let mut b = header(4096, 99);
        b[92] = 1; // version-valid-for differs from the change counter
        assert_eq!(parse(&b, 2 * 4096 + 10).unwrap().page_count, 2);
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        let e = parse(b"PK\x03\x04 not sqlite", 18).unwrap_err();
        assert!(e.message.contains("not an SQLite 3 database"), "{e:?}");
        assert!(e.message.contains("PK\\x03\\x04"), "{e:?}");
        assert!(parse(&[], 0).unwrap_err().message.contains("empty file"));
        let e = parse(&header(4096, 3)[..60], 60).unwrap_err();
        assert!(e.message.contains("truncated"), "{e:?}");
        let e = parse(&header(4096, 3), 2 * 4096).unwrap_err();
        assert!(e.message.contains("3 pages of 4096 bytes"), "{e:?}");
        assert_eq!(e.offset, Some(8192));
        assert!(parse(&header(1000, 1), 4096).is_err());
        let mut b = header(4096, 1);
        b[56..60].copy_from_slice(&2u32.to_be_bytes());
        assert!(parse(&b, 4096).unwrap_err().message.contains("UTF-16le"));
    }
}
