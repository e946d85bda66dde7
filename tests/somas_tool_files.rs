//! `memlens somas --out` against the project's own table of somas_tool's file set
//! (`docs/somas-tool-files.md`): every file written matches one documented name pattern, every
//! documented file that applies to the run is there, and every CSV's header is the documented
//! columns in order. Then the contents somas_tool's users look at: one per-tensor conflict file
//! for each tensor of each conflict pair, one `[ERROR]` log line per conflict, and the two PNG
//! charts — decoded, of the documented size, with the curve colours on the rows the documented
//! scale gives for the values in `graph_nodes.csv`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_memlens");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One row of the documented file table.
struct FileRow {
    pattern: String,
    written: String,
    columns: String,
}

/// The documented file table and, per CSV kind, its column titles.
struct Doc {
    files: Vec<FileRow>,
    columns: BTreeMap<String, Vec<String>>,
}

/// The cells of a markdown table row (`| a | b |` → `["a", "b"]`).
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(|c| c.trim().to_string()).collect()
}

fn read_doc() -> Doc {
    let text = std::fs::read_to_string(root().join("docs/somas-tool-files.md")).unwrap();
    let mut files = Vec::new();
    let mut columns: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut section = String::new();
    for line in text.lines() {
        if let Some(h) = line
            .strip_prefix("## ")
            .or_else(|| line.strip_prefix("### "))
        {
            section = h.trim().to_string();
            continue;
        }
        if !line.starts_with('|') || line.starts_with("|---") {
            continue;
        }
        let c = cells(line);
        if section == "Files" && c.len() == 4 && c[0] != "file" {
            files.push(FileRow {
                pattern: c[0].trim_matches('`').to_string(),
                written: c[1].clone(),
                columns: c[3].clone(),
            });
        } else if section.ends_with(".csv") && c.len() == 3 && c[0] != "column" {
            columns
                .entry(section.clone())
                .or_default()
                .push(c[1].clone());
        }
    }
    assert!(files.len() >= 20, "the file table was read");
    assert_eq!(columns.len(), 4, "four column tables");
    Doc { files, columns }
}

/// True when `path` matches `pattern`, where each `<…>` stands for one or more characters other
/// than `/`.
fn matches(pattern: &str, path: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'<') => {
                let Some(close) = p.iter().position(|&b| b == b'>') else {
                    return false;
                };
                let rest = &p[close + 1..];
                (1..=s.len())
                    .take_while(|&k| s[k - 1] != b'/')
                    .any(|k| go(rest, &s[k..]))
            }
            Some(&c) => s.first() == Some(&c) && go(&p[1..], &s[1..]),
        }
    }
    go(pattern.as_bytes(), path.as_bytes())
}

/// Every file under `dir`, as `/`-separated relative paths.
fn tree(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap();
                out.insert(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out
}

fn run(args: &[&str]) {
    let out = Command::new(BIN)
        .current_dir(root())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "memlens {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Checks `dir` against the doc; `expected` are the patterns of the conditional rows this run
/// must produce (the "always" rows are required in every run). Returns the matched pattern of
/// every file.
fn check_against_doc(doc: &Doc, dir: &Path, expected: &[&str]) -> BTreeMap<String, String> {
    let files = tree(dir);
    let mut matched = BTreeMap::new();
    for f in &files {
        let rows: Vec<&FileRow> = doc
            .files
            .iter()
            .filter(|r| matches(&r.pattern, f))
            .collect();
        // A file can fit a generic pattern too (`<node>/<node>_mem_frame.csv` vs
        // `StatisticInfo/MaxAddress_<node>_mem_frame.csv`): the most literal one names it.
        let row = rows
            .iter()
            .max_by_key(|r| r.pattern.chars().filter(|c| !"<>".contains(*c)).count())
            .unwrap_or_else(|| panic!("{f}: written but not in docs/somas-tool-files.md"));
        matched.insert(f.clone(), row.pattern.clone());
        if let Some(cols) = doc.columns.get(&row.columns) {
            let text = std::fs::read_to_string(dir.join(f)).unwrap();
            let header = text.lines().next().unwrap_or("");
            assert_eq!(header, cols.join(","), "{f}: header vs {}", row.columns);
        } else {
            assert!(
                ["text", "PNG", "SVG"].contains(&row.columns.as_str()),
                "{f}: {}",
                row.columns
            );
        }
    }
    let present: BTreeSet<&String> = matched.values().collect();
    for r in doc.files.iter().filter(|r| r.written.starts_with("always")) {
        assert!(present.contains(&r.pattern), "{}: missing", r.pattern);
    }
    for p in expected {
        assert!(
            doc.files.iter().any(|r| r.pattern == *p),
            "{p}: not a documented pattern"
        );
        assert!(present.contains(&p.to_string()), "{p}: missing");
    }
    matched
}

#[test]
fn toy_dump_with_every_query_writes_the_documented_files_and_headers() {
    let doc = read_doc();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    run(&[
        "somas",
        "fixtures/somas/Ascend_somas_tensor_offset_1.ir",
        "--task-info",
        "fixtures/somas/task_info_graph_1.ir",
        "--out",
        d,
        "--node",
        "MaxPool-op4",
        "--tensor",
        "4",
        "--address",
        "0x108080000300",
        "--address-range",
        "0x108080000000-0x108080000400",
    ]);
    let m = check_against_doc(
        &doc,
        dir.path(),
        &[
            "StatisticInfo/MaxAliveMemory_<node>_mem_frame.csv",
            "StatisticInfo/MaxAddress_<node>_mem_frame.csv",
            "<node>/<node>_mem_frame.csv",
            "<node>/Input<k>_Tensor<id>_relate_nodes.csv",
            "<node>/Input<k>_Tensor<id>_relate_tensors.csv",
            "<node>/Output<k>_Tensor<id>_relate_nodes.csv",
            "<node>/Output<k>_Tensor<id>_relate_tensors.csv",
            "<node>/Workspace<k>_Tensor<id>_relate_nodes.csv",
            "<node>/Workspace<k>_Tensor<id>_relate_tensors.csv",
            "CheckTensor_Tensor<id>_relate_nodes.csv",
            "CheckTensor_Tensor<id>_relate_tensors.csv",
            "CheckAddress_<hex>_tensors_list.csv",
            "CheckAddressRange_<hex>-<hex>_tensors_list.csv",
            "overwrite_conflicts.csv",
            "task_address_mismatches.csv",
        ],
    );
    // The names the doc's examples give, for this graph (MaxPool-op4 reads %3T, writes %4T and
    // has the workspace %5T; ReLU-op3 is the peak).
    for f in [
        "MaxPool-op4/MaxPool-op4_mem_frame.csv",
        "MaxPool-op4/Input0_Tensor3_relate_nodes.csv",
        "MaxPool-op4/Output0_Tensor4_relate_tensors.csv",
        "MaxPool-op4/Workspace0_Tensor5_relate_tensors.csv",
        "StatisticInfo/MaxAliveMemory_ReLU-op3_mem_frame.csv",
        "CheckAddressRange_0x108080000000-0x108080000400_tensors_list.csv",
    ] {
        assert!(m.contains_key(f), "{f}");
    }
    // No conflicts in this plan: no per-tensor conflict file, no error line.
    assert!(!m.keys().any(|f| f.starts_with("CheckTensor_ERROR_")));
    let log = std::fs::read_to_string(dir.path().join("MemoryAnalyze.log")).unwrap();
    assert!(!log.contains("[ERROR]"), "{log}");
}

#[test]
fn a_parameter_input_gets_its_relate_nodes_file() {
    let doc = read_doc();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // Conv2D-op2 reads %0T and the parameter %0P (conv1.weight).
    run(&[
        "somas",
        "fixtures/somas/Ascend_somas_tensor_offset_1.ir",
        "--out",
        d,
        "--node",
        "Conv2D-op2",
    ]);
    let m = check_against_doc(
        &doc,
        dir.path(),
        &["<node>/Input<k>_Parameter<id>_relate_nodes.csv"],
    );
    assert!(m.contains_key("Conv2D-op2/Input1_Parameter0_relate_nodes.csv"));
}

/// The generated dump with injected conflicts, its `--out` folder (built once per test).
fn generated(dir: &Path) -> PathBuf {
    let dump = dir.join("Ascend_somas_tensor_offset_1.ir");
    let out = dir.join("out");
    let (dump_s, out_s) = (dump.to_str().unwrap(), out.to_str().unwrap());
    run(&[
        "generate",
        "somas",
        "--flavor",
        "v2.4",
        "--nodes",
        "3000",
        "--seed",
        "8",
        "--inject-conflicts",
        "4",
        "--out",
        dump_s,
    ]);
    run(&["somas", dump_s, "--out", out_s]);
    out
}

#[test]
fn every_tensor_of_a_conflict_gets_its_file_and_every_conflict_a_log_line() {
    let doc = read_doc();
    let dir = tempfile::tempdir().unwrap();
    let out = generated(dir.path());
    let m = check_against_doc(
        &doc,
        &out,
        &[
            "CheckTensor_ERROR_Tensor<id>_overwrite_tensors.csv",
            "overwrite_conflicts.csv",
        ],
    );
    // Partners of each tensor, from the pair list.
    let mut partners: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut rdr = csv::Reader::from_path(out.join("overwrite_conflicts.csv")).unwrap();
    let mut pairs = Vec::new();
    for r in rdr.records() {
        let r = r.unwrap();
        let (a, b) = (r[0].to_string(), r[1].to_string());
        partners.entry(a.clone()).or_default().insert(b.clone());
        partners.entry(b.clone()).or_default().insert(a.clone());
        pairs.push((a, b));
    }
    assert!(pairs.len() >= 4, "the injected conflicts are found");
    let files: BTreeSet<&String> = m
        .keys()
        .filter(|f| f.starts_with("CheckTensor_ERROR_"))
        .collect();
    assert_eq!(
        files.len(),
        partners.len(),
        "one file per tensor in a conflict"
    );
    for (t, ps) in &partners {
        let f = out.join(format!("CheckTensor_ERROR_Tensor{t}_overwrite_tensors.csv"));
        let mut rdr = csv::Reader::from_path(&f).unwrap();
        let ids: Vec<String> = rdr.records().map(|r| r.unwrap()[0].to_string()).collect();
        assert_eq!(ids.first(), Some(t), "{}: the tensor first", f.display());
        let rest: BTreeSet<String> = ids[1..].iter().cloned().collect();
        assert_eq!(&rest, ps, "{}: its partners", f.display());
    }
    let log = std::fs::read_to_string(out.join("MemoryAnalyze.log")).unwrap();
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("[ERROR] overwrite:"))
        .collect();
    assert_eq!(errors.len(), pairs.len(), "one error line per conflict");
    for (a, b) in &pairs {
        let needle = format!("tensor %{a}T and tensor %{b}T");
        assert!(errors.iter().any(|l| l.contains(&needle)), "{needle}");
    }
}

/// A decoded PNG: width, height, RGB bytes.
struct Image {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Image {
    fn read(path: &Path) -> Image {
        let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
        let mut reader = dec.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb, "{}", path.display());
        assert_eq!(info.bit_depth, png::BitDepth::Eight);
        buf.truncate(info.buffer_size());
        Image {
            width: info.width,
            height: info.height,
            rgb: buf,
        }
    }

    fn at(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) * 3) as usize;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// The first row (from the top) in column `x` with `color`.
    fn top_of(&self, x: u32, color: [u8; 3]) -> Option<u32> {
        (0..self.height).find(|&y| self.at(x, y) == color)
    }
}

const RED: [u8; 3] = [0xd6, 0x27, 0x28];
const BLUE: [u8; 3] = [0x1f, 0x77, 0xb4];
// The documented layout: plot columns 100..1170, row 80 = largest value, row 420 = 0 bytes.
const LEFT: u32 = 100;
const COLS: u64 = 1070;
const TOP: u64 = 80;
const BOTTOM: u64 = 420;

/// The row of value `v` on a scale whose largest value is `max` (rounded half up).
fn row(v: u64, max: u64) -> u32 {
    let h = u128::from(BOTTOM - TOP);
    (u128::from(BOTTOM) - (u128::from(v) * h + u128::from(max) / 2) / u128::from(max)) as u32
}

/// Per execution index, the values of columns `with` and `without` of graph_nodes.csv.
fn node_values(out: &Path, with: &str, without: &str) -> Vec<(u64, u64)> {
    let mut rdr = csv::Reader::from_path(out.join("graph_nodes.csv")).unwrap();
    let h = rdr.headers().unwrap().clone();
    let at = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (i, a, b) = (at("Index"), at(with), at(without));
    let mut v: Vec<(usize, u64, u64)> = rdr
        .records()
        .map(|r| {
            let r = r.unwrap();
            (
                r[i].parse().unwrap(),
                r[a].parse().unwrap(),
                r[b].parse().unwrap(),
            )
        })
        .collect();
    v.sort_unstable();
    v.iter().enumerate().for_each(|(k, x)| assert_eq!(k, x.0));
    v.into_iter().map(|(_, a, b)| (a, b)).collect()
}

/// Checks one chart against the node values: size, each index's value in the middle column of
/// its span (small graphs), and the peak on the top row in its column.
fn check_chart(png: &Path, values: &[(u64, u64)]) {
    let img = Image::read(png);
    assert_eq!((img.width, img.height), (1200, 480), "{}", png.display());
    let n = values.len() as u64;
    let max = values.iter().map(|v| v.0.max(v.1)).max().unwrap();
    if n <= COLS / 4 {
        // Each index covers several columns: its middle column shows exactly its values.
        for (i, &(with, without)) in values.iter().enumerate() {
            let x = LEFT + ((2 * i as u64 + 1) * COLS / (2 * n)) as u32;
            let (rw, ro) = (row(with, max), row(without, max));
            if rw + 1 < ro {
                assert_eq!(
                    img.at(x, rw),
                    RED,
                    "{} index {i} at ({x},{rw})",
                    png.display()
                );
                assert_eq!(img.at(x, rw - 1), RED, "2 px wide");
            }
            assert_eq!(
                img.at(x, ro),
                BLUE,
                "{} index {i} at ({x},{ro})",
                png.display()
            );
        }
    }
    // The largest value: the red curve reaches the top row (80, drawn 2 px: 79–80) in the
    // column of the first index that has it, and nowhere in the plot rises above it.
    let peak = values.iter().position(|v| v.0 == max).unwrap() as u64;
    let x = LEFT + (peak * COLS / n) as u32;
    assert_eq!(
        img.top_of(x, RED),
        Some(TOP as u32 - 1),
        "{}",
        png.display()
    );
    for x in LEFT..LEFT + COLS as u32 {
        if let Some(y) = img.top_of(x, RED) {
            assert!(y >= TOP as u32 - 1 || y < 70, "({x},{y}) above the scale");
        }
    }
    // Both colours are in the legend above the plot too.
    assert!((0..70).any(|y| (LEFT..400).any(|x| img.at(x, y) == RED)));
    assert!((0..70).any(|y| (LEFT..700).any(|x| img.at(x, y) == BLUE)));
}

#[test]
fn pngs_show_the_curves_of_graph_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("toy");
    run(&[
        "somas",
        "fixtures/somas/Ascend_somas_tensor_offset_1.ir",
        "--out",
        d.to_str().unwrap(),
    ]);
    let gen = generated(dir.path());
    for out in [d, gen] {
        let si = out.join("StatisticInfo");
        check_chart(
            &si.join("InUseMemory.png"),
            &node_values(&out, "InUseMemory", "AliveTensorsSize"),
        );
        check_chart(
            &si.join("TotalMemory.png"),
            &node_values(&out, "TotalMemory", "TotalTensorSize"),
        );
    }
}
