//! somas_tool's output file set, with its file names and columns: `graph_nodes.csv`,
//! `graph_parameters.csv`, `graph_tensors.csv`, `MemoryAnalyze.log`, `StatisticInfo/overview.txt`,
//! the in-use and total memory charts (PNG as somas_tool writes them, plus SVG), the two
//! `*_mem_frame.csv` files, and the query and conflict files. `docs/somas-tool-files.md` lists
//! every file with its header.
//!
//! [`file_set`] lists the files for a model, an analysis and the queries asked; [`write_file`]
//! writes one of them to any `Write`, so the CLI writes to disk and the page can offer downloads
//! from the same code.

use super::curves::{curve_pixels, curve_png, curve_svg, Series};
use crate::somas::analysis::Analysis;
use crate::somas::model::{split_name, SomasModel, NONE};
use crate::somas::queries::{self, Role, Target};
use crate::somas::summary::Summary;
use crate::somas::tables::{self, hex, Cell, Table};
use std::fmt::Write as _;
use std::io::{self, Write};

/// Writes rows of `table` as CSV with somas_tool's header (`rows = None`: every row).
pub fn write_table<W: Write>(
    out: W,
    model: &SomasModel,
    an: &Analysis,
    table: Table,
    rows: Option<&[u32]>,
) -> io::Result<()> {
    let mut w = super::csv_writer(out);
    w.write_record(table.csv_header())?;
    let ncol = table.columns().len();
    let mut text = String::new();
    let mut emit = |r: u32| -> io::Result<()> {
        for c in 0..ncol {
            tables::cell(model, an, table, r, c).render(&mut text);
            w.write_field(text.as_bytes())?;
        }
        w.write_record(None::<&[u8]>)?;
        Ok(())
    };
    match rows {
        Some(rows) => rows.iter().try_for_each(|&r| emit(r))?,
        None => (0..table.rows(model, an) as u32).try_for_each(&mut emit)?,
    }
    w.flush()?;
    Ok(())
}

/// Bytes as somas_tool prints them: GiB with four significant digits, labelled `GB`.
pub fn gb(bytes: u64) -> String {
    let x = bytes as f64 / (1u64 << 30) as f64;
    if x == 0.0 {
        return "0GB".to_string();
    }
    let decimals = (3 - x.log10().floor() as i32).clamp(0, 12) as usize;
    format!("{x:.decimals$}GB")
}

fn pct(v: Option<f64>) -> String {
    v.map_or("n/a".to_string(), |v| format!("{:.2}%", v * 100.0))
}

/// What `memlens somas` prints without `--json` or queries: the overview, the dump's notes and
/// warnings, and the first 20 conflicts.
pub fn report_text(model: &SomasModel, an: &Analysis, s: &Summary) -> String {
    let mut o = overview(model, an, s);
    for n in &model.notes {
        let _ = writeln!(o, "note: {n}");
    }
    for d in &model.warnings {
        let _ = writeln!(o, "{d}");
    }
    for (k, c) in s.conflicts.iter().enumerate().take(20) {
        let _ = writeln!(o, "conflict {}: %{}T and %{}T", k + 1, c[0], c[1]);
    }
    if s.conflicts.len() > 20 {
        let _ = writeln!(o, "… {} conflicts in all", s.conflicts.len());
    }
    o
}

/// `StatisticInfo/overview.txt`: somas_tool's lines, then the named ratios and extra figures.
pub fn overview(model: &SomasModel, an: &Analysis, s: &Summary) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Format: {} {} ({})",
        model.format.family.id(),
        model.format.version,
        model.file
    );
    if let Some(t) = &s.task {
        if let (Some(lo), Some(hi)) = (t.address_min, t.address_max) {
            let _ = writeln!(o, "Task Tensor Address: Min {}, Max {}", hex(lo), hex(hi));
        }
    }
    if let Some((lo, hi)) = an.somas_range {
        let _ = writeln!(
            o,
            "SOMAS Tensor Address: Min {}, Max {}, Total Size {} ({})",
            hex(an.base.saturating_add(lo)),
            hex(an.base.saturating_add(hi)),
            gb(hi - lo),
            hi - lo
        );
    }
    if let Some((lo, hi, sum)) = an.param_range(model) {
        let _ = writeln!(
            o,
            "Parameter & ValueNode : Min {}, Max {}, Total Size {} ({})",
            hex(lo),
            hex(hi),
            gb(sum),
            sum
        );
    }
    let _ = writeln!(
        o,
        "Graph Total Input Static Memory Size {} ({})",
        gb(an.static_bytes),
        an.static_bytes
    );
    if let Some(p) = &s.peak {
        let _ = writeln!(
            o,
            "Max In Use Memory Node {}, index {}, Alive Tensor Size {} ({}), In Use Memory size: {} ({})",
            p.node_name,
            p.node_index,
            gb(p.in_use_bytes),
            p.in_use_bytes,
            gb(p.in_use_with_static_bytes),
            p.in_use_with_static_bytes
        );
    }
    let total_use = an.upper_bound.saturating_add(an.static_bytes);
    let _ = writeln!(
        o,
        "Max Total Use Memory Size {} ({})",
        gb(total_use),
        total_use
    );
    let _ = writeln!(
        o,
        "Max Total Tensor Memory Size {} ({})",
        gb(an.upper_bound),
        an.upper_bound
    );
    if let Some(m) = &s.max_address_without_lifelong {
        let _ = writeln!(
            o,
            "Max Addr without LifeLong Tensor: Node {}, Node Id {}, Output Index {}, End Address {}",
            m.node_name,
            m.node_index.map_or("-".to_string(), |i| i.to_string()),
            m.output_index.map_or("-".to_string(), |i| i.to_string()),
            hex(m.end_address)
        );
    }
    let _ = writeln!(
        o,
        "Memory Reuse Ratio {} (somas_tool's ratio: 1 - peak in-use / max total tensor memory)",
        pct(an.ratio("somas_tool_reuse_ratio"))
    );
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Total Memory Size after reused {} ({}){}",
        gb(an.reused),
        an.reused,
        if an.reused_from_dump {
            ""
        } else {
            " [largest end offset: the dump has no total line]"
        }
    );
    let _ = writeln!(
        o,
        "LifeLong tensors: stacked {} ({}), GraphAll {}, GraphStart {}, GraphEnd {}",
        gb(an.lifelong.stacked),
        an.lifelong.stacked,
        an.lifelong.graph_all,
        an.lifelong.graph_start,
        an.lifelong.graph_end
    );
    let _ = writeln!(o, "Reuse ratios:");
    for r in &an.ratios {
        let _ = writeln!(o, "  {} = {} = {}", r.name, r.formula, pct(r.value));
    }
    let _ = writeln!(
        o,
        "Overwrite conflicts: {}{}",
        if an.conflicts.checked {
            s.conflicts.len().to_string()
        } else {
            "not checked (offsets not solved)".to_string()
        },
        if an.conflicts.truncated {
            " (truncated)"
        } else {
            ""
        }
    );
    if s.task.is_some() {
        let _ = writeln!(o, "Task address mismatches: {}", s.task_mismatches.len());
    }
    o
}

/// A node name made safe as a file name (somas_tool uses the op name, e.g. `RealDiv-op1387`).
pub fn file_safe(name: &str) -> String {
    split_name(name)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The document `memlens somas --json` prints: the summary, plus one key per query asked
/// (`node_query`, `tensor_query`, `address_query`, `address_range_query`), pretty-printed and
/// ending with a line feed. The page's "summary.json" download is the same bytes.
pub fn summary_json(
    model: &SomasModel,
    an: &Analysis,
    summary: &Summary,
    q: &QuerySet,
) -> Result<String, serde_json::Error> {
    let mut v = serde_json::to_value(summary)?;
    if let Some(obj) = v.as_object_mut() {
        if let Some(node) = q.node {
            obj.insert("node_query".into(), queries::json::node(model, an, node));
        }
        if let Some(t) = q.tensor {
            obj.insert("tensor_query".into(), queries::json::tensor(model, an, t));
        }
        if let Some(a) = q.address {
            obj.insert("address_query".into(), queries::json::address(model, an, a));
        }
        if let Some((lo, hi)) = q.range {
            obj.insert(
                "address_range_query".into(),
                queries::json::range(model, an, lo, hi),
            );
        }
    }
    let mut text = serde_json::to_string_pretty(&v)?;
    text.push('\n');
    Ok(text)
}

/// What the user asked besides the default outputs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuerySet {
    /// `--node`: a node row.
    pub node: Option<u32>,
    /// `--tensor`: a tensor row.
    pub tensor: Option<u32>,
    /// `--address`.
    pub address: Option<u64>,
    /// `--address-range` as `[lo, hi)`.
    pub range: Option<(u64, u64)>,
}

/// What one output file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Rows of a table (`None`: all).
    Rows(Table, Option<Vec<u32>>),
    /// Text.
    Text(String),
    /// One of somas_tool's two charts, drawn when the file is written.
    Chart(Chart, Image),
}

/// somas_tool's two charts of `StatisticInfo/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chart {
    /// `InUseMemory`: In Use Memory (with the static memory) and Alive Tensor Size, after reuse.
    InUse,
    /// `TotalMemory`: Total Memory (with the static memory) and Total Tensor Size, without reuse.
    Total,
}

/// The image format of a chart file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Image {
    /// PNG, as somas_tool writes.
    Png,
    /// SVG (vector, for zooming in).
    Svg,
}

/// Legend colours: matplotlib's first two, which somas_tool's charts use.
const RED: [u8; 3] = [0xd6, 0x27, 0x28];
const BLUE: [u8; 3] = [0x1f, 0x77, 0xb4];

/// Draws `chart` as `image`: the first series includes the static memory, the second does not.
pub fn chart_bytes(an: &Analysis, chart: Chart, image: Image) -> io::Result<Vec<u8>> {
    with_chart(an, chart, |title, note, series| match image {
        Image::Svg => Ok(curve_svg(title, series).into_bytes()),
        Image::Png => curve_png(title, note, series).map_err(io::Error::other),
    })
}

/// The pixels of `chart`'s PNG before encoding ([`curve_pixels`]): the fuzz targets draw every
/// chart through this, as the encoding is most of a PNG's cost and the same whatever the dump.
pub fn chart_pixels(an: &Analysis, chart: Chart) -> Vec<u8> {
    with_chart(an, chart, curve_pixels)
}

/// Calls `f` with `chart`'s title, the PNG's note and the two series, the first with the static
/// memory and the second without.
fn with_chart<R>(an: &Analysis, chart: Chart, f: impl FnOnce(&str, &str, &[Series<'_>]) -> R) -> R {
    let (title, with, without, bare) = match chart {
        Chart::InUse => (
            "In Use Memory",
            "In Use Memory",
            "Alive Tensor Size",
            &an.in_use,
        ),
        Chart::Total => (
            "Total Memory",
            "Total Memory",
            "Total Tensor Size",
            &an.total,
        ),
    };
    let with_static: Vec<u64> = bare
        .iter()
        .map(|v| v.saturating_add(an.static_bytes))
        .collect();
    let series = [
        Series {
            name: with,
            values: &with_static,
            color: RED,
        },
        Series {
            name: without,
            values: bare,
            color: BLUE,
        },
    ];
    let note = format!(
        "{with} includes the static memory ({}); {without} does not",
        gb(an.static_bytes)
    );
    f(title, &note, &series)
}

/// One output file, by path relative to the output folder (`/`-separated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutFile {
    /// Relative path.
    pub path: String,
    /// Content.
    pub content: Content,
}

/// Per-tensor conflict files are capped so a broken plan cannot flood the folder; the full list
/// is always in `overwrite_conflicts.csv`.
pub const MAX_CONFLICT_FILES: usize = 1000;

/// The file set for `model`: somas_tool's default files, the query files and the conflict files.
pub fn file_set(
    model: &SomasModel,
    an: &Analysis,
    s: &Summary,
    q: &QuerySet,
    log: &str,
) -> Vec<OutFile> {
    let mut out = vec![
        OutFile {
            path: "graph_nodes.csv".into(),
            content: Content::Rows(Table::Nodes, None),
        },
        OutFile {
            path: "graph_parameters.csv".into(),
            content: Content::Rows(Table::Parameters, None),
        },
        OutFile {
            path: "graph_tensors.csv".into(),
            content: Content::Rows(Table::Tensors, None),
        },
        OutFile {
            path: "StatisticInfo/overview.txt".into(),
            content: Content::Text(overview(model, an, s)),
        },
    ];
    for (name, chart) in [("InUseMemory", Chart::InUse), ("TotalMemory", Chart::Total)] {
        for (ext, image) in [("png", Image::Png), ("svg", Image::Svg)] {
            out.push(OutFile {
                path: format!("StatisticInfo/{name}.{ext}"),
                content: Content::Chart(chart, image),
            });
        }
    }
    if let Some(p) = an.peak {
        let name = if p.node_row == NONE {
            format!("index{}", p.index)
        } else {
            file_safe(model.node_name(p.node_row))
        };
        out.push(OutFile {
            path: format!("StatisticInfo/MaxAliveMemory_{name}_mem_frame.csv"),
            content: Content::Rows(Table::Tensors, Some(an.frame(model, p.index))),
        });
    }
    if let Some(m) = an.max_address_without_lifelong {
        if let Some(&index) = model.nodes.index.get(m.node_row as usize) {
            out.push(OutFile {
                path: format!(
                    "StatisticInfo/MaxAddress_{}_mem_frame.csv",
                    file_safe(model.node_name(m.node_row))
                ),
                content: Content::Rows(Table::Tensors, Some(an.frame(model, index))),
            });
        }
    }
    let tid = |t: u32| model.tensors.id.get(t as usize).copied().unwrap_or(0);
    if let Some(node) = q.node {
        let rep = queries::node_query(model, an, node);
        let dir = file_safe(model.node_name(node));
        out.push(OutFile {
            path: format!("{dir}/{dir}_mem_frame.csv"),
            content: Content::Rows(Table::Tensors, Some(rep.frame.clone())),
        });
        for io in &rep.io {
            let role = match io.role {
                Role::Input => "Input",
                Role::Output => "Output",
                Role::Workspace => "Workspace",
            };
            let (what, is_tensor) = match io.target {
                Target::Tensor(t) => (format!("Tensor{}", tid(t)), true),
                Target::Parameter(p) => (
                    format!(
                        "Parameter{}",
                        model.params.id.get(p as usize).copied().unwrap_or(0)
                    ),
                    false,
                ),
            };
            let nodes: Vec<u32> = io.related_nodes.iter().map(|n| n.0).collect();
            out.push(OutFile {
                path: format!("{dir}/{role}{}_{what}_relate_nodes.csv", io.position),
                content: Content::Rows(Table::Nodes, Some(nodes)),
            });
            if is_tensor {
                out.push(OutFile {
                    path: format!("{dir}/{role}{}_{what}_relate_tensors.csv", io.position),
                    content: Content::Rows(
                        Table::Tensors,
                        Some(io.overlapping.iter().map(|o| o.tensor_row).collect()),
                    ),
                });
            }
        }
    }
    if let Some(t) = q.tensor {
        let rep = queries::tensor_query(model, an, t);
        let mut nodes: Vec<u32> = rep.nodes.iter().map(|n| n.0).collect();
        nodes.dedup();
        out.push(OutFile {
            path: format!("CheckTensor_Tensor{}_relate_nodes.csv", tid(t)),
            content: Content::Rows(Table::Nodes, Some(nodes)),
        });
        out.push(OutFile {
            path: format!("CheckTensor_Tensor{}_relate_tensors.csv", tid(t)),
            content: Content::Rows(
                Table::Tensors,
                Some(rep.overlapping.iter().map(|o| o.tensor_row).collect()),
            ),
        });
    }
    if let Some(a) = q.address {
        out.push(OutFile {
            path: format!("CheckAddress_{}_tensors_list.csv", hex(a)),
            content: Content::Rows(Table::Tensors, Some(queries::address_query(model, an, a))),
        });
    }
    if let Some((lo, hi)) = q.range {
        out.push(OutFile {
            path: format!("CheckAddressRange_{}-{}_tensors_list.csv", hex(lo), hex(hi)),
            content: Content::Rows(
                Table::Tensors,
                Some(queries::range_query(model, an, lo, hi)),
            ),
        });
    }
    if an.conflicts.checked {
        out.push(OutFile {
            path: "overwrite_conflicts.csv".into(),
            content: Content::Rows(Table::Conflicts, None),
        });
        // Every tensor of a conflict gets its file (both tensors of a pair), listing itself
        // first, then every tensor it overlaps while both are alive.
        let mut by_first: Vec<(u32, u32)> = an
            .conflicts
            .pairs
            .iter()
            .flat_map(|&(a, b)| [(a, b), (b, a)])
            .collect();
        by_first.sort_unstable();
        by_first.dedup();
        for run in by_first
            .chunk_by(|a, b| a.0 == b.0)
            .take(MAX_CONFLICT_FILES)
        {
            let Some(&(a, _)) = run.first() else { continue };
            let mut rows = vec![a];
            rows.extend(run.iter().map(|p| p.1));
            out.push(OutFile {
                path: format!("CheckTensor_ERROR_Tensor{}_overwrite_tensors.csv", tid(a)),
                content: Content::Rows(Table::Tensors, Some(rows)),
            });
        }
    }
    if let Some(m) = &an.task {
        out.push(OutFile {
            path: "task_address_mismatches.csv".into(),
            content: Content::Rows(Table::Tensors, Some(m.mismatches.clone())),
        });
    }
    out.push(OutFile {
        path: "MemoryAnalyze.log".into(),
        content: Content::Text(log.to_string()),
    });
    out
}

/// Writes one output file's bytes to `w`.
pub fn write_file<W: Write>(
    f: &OutFile,
    model: &SomasModel,
    an: &Analysis,
    mut w: W,
) -> io::Result<()> {
    match &f.content {
        Content::Rows(table, rows) => write_table(w, model, an, *table, rows.as_deref()),
        Content::Text(t) => w.write_all(t.as_bytes()),
        Content::Chart(chart, image) => w.write_all(&chart_bytes(an, *chart, *image)?),
    }
}

/// Writes `files` into one zip archive (deflated) and returns the writer.
///
/// Every entry carries the zip format's earliest timestamp (1980-01-01), so the archive's bytes
/// depend on the content only: the page offers the CLI's `--out` folder as one download, and the
/// same input gives the same zip wherever it is made.
pub fn write_zip<W: Write + io::Seek>(
    files: &[OutFile],
    model: &SomasModel,
    an: &Analysis,
    out: W,
) -> io::Result<W> {
    let mut zip = zip::ZipWriter::new(out);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644);
    for f in files {
        zip.start_file(f.path.as_str(), options)
            .map_err(io::Error::other)?;
        write_file(f, model, an, &mut zip)?;
    }
    zip.finish().map_err(io::Error::other)
}

/// `MemoryAnalyze.log`: inputs, format, counts, notes, warnings and results, one fact a line.
pub fn log(model: &SomasModel, an: &Analysis, s: &Summary) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "[INFO] SOMAS file: {}", model.file);
    if let Some(t) = &s.task {
        let _ = writeln!(
            o,
            "[INFO] task info file: {} ({} records, {} matched no node)",
            t.file, t.records, t.unmatched_records
        );
    }
    let _ = writeln!(
        o,
        "[INFO] format: {} {}",
        model.format.family.id(),
        model.format.version
    );
    let _ = writeln!(
        o,
        "[INFO] {} nodes, {} data tensors, {} control tensors, {} parameters, {} union groups, {} contiguous lists",
        s.nodes, s.tensors, s.control_tensors, s.parameters, s.union_groups, s.contiguous_lists
    );
    for n in &model.notes {
        let _ = writeln!(o, "[NOTE] {n}");
    }
    for w in &model.warnings {
        let _ = writeln!(o, "[WARNING] {w}");
    }
    if an.conflicts.checked {
        for &(a, b) in an.conflicts.pairs.iter().take(10_000) {
            let _ = writeln!(
                o,
                "[ERROR] overwrite: tensor %{}T and tensor %{}T share memory while both alive ({}..{} and {}..{})",
                model.tensors.id.get(a as usize).copied().unwrap_or(0),
                model.tensors.id.get(b as usize).copied().unwrap_or(0),
                an.lo.get(a as usize).copied().unwrap_or(0),
                an.hi.get(a as usize).copied().unwrap_or(0),
                an.lo.get(b as usize).copied().unwrap_or(0),
                an.hi.get(b as usize).copied().unwrap_or(0),
            );
        }
        let _ = writeln!(o, "[INFO] overwrite conflicts: {}", s.conflicts.len());
    } else {
        let _ = writeln!(o, "[INFO] overwrite check skipped: offsets are not solved");
    }
    if let Some(m) = &an.task {
        for &t in m.mismatches.iter().take(10_000) {
            let r = t as usize;
            let _ = writeln!(
                o,
                "[ERROR] task address mismatch: tensor %{}T task address {} but base + offset is {}",
                model.tensors.id.get(r).copied().unwrap_or(0),
                hex(m.tensor_addr.get(r).copied().unwrap_or(0)),
                hex(an.address(model, t))
            );
        }
        let _ = writeln!(o, "[INFO] task address mismatches: {}", m.mismatches.len());
    }
    o
}

/// Renders cells of one table row as text (for terminal output).
pub fn row_text(model: &SomasModel, an: &Analysis, table: Table, row: u32) -> Vec<String> {
    let mut s = String::new();
    (0..table.columns().len())
        .map(|c| {
            let cell: Cell = tables::cell(model, an, table, row, c);
            cell.render(&mut s);
            s.clone()
        })
        .collect()
}
