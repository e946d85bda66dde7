//! Paths of inputs: relative, `/`-separated, including the dropped folder's own name, whatever the
//! origin (a walk of the disk, a browser drop, an archive's members under `<archive path>/…`).

/// Normalises a path: `\` → `/`, no leading `./` or `/`, no empty components.
pub fn normalize_path(path: &str) -> String {
    path.replace('\\', "/")
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// The last component of a normalised path.
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Everything before the last component (`""` at the top).
pub fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalise_and_split() {
        assert_eq!(normalize_path(".\\job//a/./b.csv"), "job/a/b.csv");
        assert_eq!(file_name("job/a/b.csv"), "b.csv");
        assert_eq!(parent("job/a/b.csv"), "job/a");
        assert_eq!(parent("b.csv"), "");
    }
}
