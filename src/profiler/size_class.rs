//! Size classes of allocations: power-of-two ranges `[2^k, 2^(k+1))`, the grouping of the live
//! set and leak candidates that needs neither call stacks nor op names. Allocators round requests
//! to block sizes, so allocations of one tensor shape fall in one class, and the classes say
//! whether a peak is made of a few large blocks or of many small ones.

/// One size class: the sizes `min..=max` (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeClass {
    /// Smallest size in the class.
    pub min: u64,
    /// Largest size in the class.
    pub max: u64,
}

impl SizeClass {
    /// The class of `size`: `[2^k, 2^(k+1))` with `2^k <= size`; size 0 is a class of its own.
    pub fn of(size: u64) -> SizeClass {
        if size == 0 {
            return SizeClass { min: 0, max: 0 };
        }
        let k = 63 - size.leading_zeros();
        let min = 1u64 << k;
        SizeClass {
            min,
            max: min.checked_mul(2).map_or(u64::MAX, |n| n - 1),
        }
    }

    /// `"1 MiB – 2 MiB"`: the bounds in binary units, the upper one excluded (`"0 B"` for size
    /// 0, `"≥ 8 EiB"` for the last class). The bounds are powers of two, so they print exactly.
    pub fn label(&self) -> String {
        match (self.min, self.max) {
            (0, _) => "0 B".to_string(),
            (lo, u64::MAX) => format!("≥ {}", power_text(lo)),
            (lo, hi) => format!("{} – {}", power_text(lo), power_text(hi + 1)),
        }
    }
}

/// The binary units of sizes in words, each 1024 times the one before.
const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// The largest of [`UNITS`] that `n` bytes reach (index: the unit is 1024^index bytes).
fn unit_of(n: u64) -> usize {
    let k = 63 - n.max(1).leading_zeros() as usize;
    (k / 10).min(UNITS.len() - 1)
}

/// A power of two in bytes as text in the largest binary unit it is a whole number of.
fn power_text(n: u64) -> String {
    let unit = unit_of(n);
    format!("{} {}", n >> (unit * 10), UNITS[unit])
}

/// A size in words, as the page writes sizes (www/format.js `bytes`): whole bytes below 1 KiB
/// (`131 B`), else the largest binary unit reached with two decimals, one from 100 on
/// (`1.50 KiB`, `830.3 MiB`). For messages, where an exact count of bytes reads as noise.
pub fn bytes_text(n: u64) -> String {
    let unit = unit_of(n);
    if unit == 0 {
        return format!("{n} B");
    }
    // Exact in an f64 to 2^53 bytes, and within a rounding step beyond: it is only shown.
    let v = n as f64 / (1u64 << (unit * 10)) as f64;
    let decimals = if v >= 100.0 { 1 } else { 2 };
    format!("{v:.decimals$} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::SizeClass;

    /// The page's texts (www/format.js `bytes`, worked out by hand): whole bytes below 1 KiB,
    /// two decimals below 100 of a unit, one from 100 on.
    #[test]
    fn sizes_read_as_the_page_writes_them() {
        use super::bytes_text;
        assert_eq!(bytes_text(0), "0 B");
        assert_eq!(bytes_text(131), "131 B");
        assert_eq!(bytes_text(1023), "1023 B");
        assert_eq!(bytes_text(1536), "1.50 KiB");
        assert_eq!(bytes_text(100 << 10), "100.0 KiB");
        // 870601265 / 2^20 = 830.26…
        assert_eq!(bytes_text(870_601_265), "830.3 MiB");
        assert_eq!(bytes_text(5 << 30), "5.00 GiB");
        assert_eq!(bytes_text(u64::MAX), "16.00 EiB");
    }

    #[test]
    fn classes_are_powers_of_two_with_exact_labels() {
        assert_eq!(SizeClass::of(0).label(), "0 B");
        assert_eq!(SizeClass::of(1), SizeClass { min: 1, max: 1 });
        assert_eq!(SizeClass::of(1).label(), "1 B – 2 B");
        assert_eq!(SizeClass::of(512).label(), "512 B – 1 KiB");
        assert_eq!(
            SizeClass::of(1023),
            SizeClass {
                min: 512,
                max: 1023
            }
        );
        assert_eq!(SizeClass::of(1024).label(), "1 KiB – 2 KiB");
        assert_eq!(SizeClass::of(3 << 20).label(), "2 MiB – 4 MiB");
        assert_eq!(
            SizeClass::of(3 << 20),
            SizeClass {
                min: 2 << 20,
                max: (4 << 20) - 1
            }
        );
        assert_eq!(SizeClass::of((1 << 30) - 1).label(), "512 MiB – 1 GiB");
        assert_eq!(SizeClass::of(u64::MAX).label(), "≥ 8 EiB");
        assert_eq!(SizeClass::of(u64::MAX).max, u64::MAX);
    }
}
