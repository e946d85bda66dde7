//! The tables of somas_tool (`graph_tensors.csv`, `graph_nodes.csv`, `graph_parameters.csv`) plus
//! the conflict list: [`cell`] gives somas_tool's cells for the CSV export, [`to_table`] the same
//! data as typed columns of [`crate::table::Table`] for the views (sorting, filtering, paging).

use super::analysis::Analysis;
use super::model::{split_name, Lifelong, SomasModel, TensorKind, INPUT_PARAM, NONE};
use serde::Serialize;

/// One table cell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// No value (e.g. no task address without task-info).
    Empty,
    /// An integer.
    Int(u64),
    /// Text.
    Text(String),
}

impl Cell {
    /// Writes the cell as CSV text into `out` (cleared first).
    pub fn render(&self, out: &mut String) {
        out.clear();
        match self {
            Cell::Empty => {}
            Cell::Int(v) => out.push_str(itoa::Buffer::new().format(*v)),
            Cell::Text(s) => out.push_str(s),
        }
    }
}

/// The tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Table {
    /// `graph_tensors.csv`: one row per data tensor.
    Tensors,
    /// `graph_nodes.csv`: one row per node.
    Nodes,
    /// `graph_parameters.csv`: one row per parameter.
    Parameters,
    /// Overwrite conflicts: one row per pair.
    Conflicts,
}

/// `graph_tensors.csv` columns (somas_tool's names; its first column has an empty header).
pub const TENSOR_COLUMNS: [&str; 22] = [
    "TensorId",
    "SourceNodeId",
    "SourceNodeName",
    "OutputIndex",
    "SourceStream",
    "StartAddr",
    "StartAddrHex",
    "Size",
    "AlignSize",
    "EndAddr",
    "EndAddrHex",
    "LifeStart",
    "LifeEnd",
    "LifeLong",
    "TensorType",
    "TaskStartAddr",
    "TaskStartAddrHex",
    "TaskSize",
    "TaskEndAddr",
    "TaskEndAddrHex",
    "DestinationStreams",
    "Destinations",
];

/// `graph_nodes.csv` columns (first header empty in somas_tool: the node name).
pub const NODE_COLUMNS: [&str; 13] = [
    "Name",
    "Index",
    "OpId",
    "Stream",
    "Tensors",
    "Parameters",
    "Inputs",
    "Outputs",
    "Workspaces",
    "AliveTensorsSize",
    "TotalTensorSize",
    "InUseMemory",
    "TotalMemory",
];

/// `graph_parameters.csv` columns (first header empty in somas_tool: the parameter index).
pub const PARAM_COLUMNS: [&str; 9] = [
    "Index",
    "SourceNodeName",
    "OutputIndex",
    "StartAddr",
    "StartAddrHex",
    "Size",
    "EndAddr",
    "EndAddrHex",
    "Destinations",
];

/// Conflict list columns.
pub const CONFLICT_COLUMNS: [&str; 10] = [
    "TensorA",
    "TensorB",
    "NodeA",
    "NodeB",
    "LifeA",
    "LifeB",
    "RangeA",
    "RangeB",
    "OverlapBytes",
    "OverlapNodes",
];

impl Table {
    /// The table's name in requests (`tensors`, `nodes`, `parameters`, `conflicts`).
    pub fn key(self) -> &'static str {
        match self {
            Table::Tensors => "tensors",
            Table::Nodes => "nodes",
            Table::Parameters => "parameters",
            Table::Conflicts => "conflicts",
        }
    }

    /// The index of the column called `name`.
    pub fn column(self, name: &str) -> Option<usize> {
        self.columns().iter().position(|c| *c == name)
    }

    /// Column names as shown on the page.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Table::Tensors => &TENSOR_COLUMNS,
            Table::Nodes => &NODE_COLUMNS,
            Table::Parameters => &PARAM_COLUMNS,
            Table::Conflicts => &CONFLICT_COLUMNS,
        }
    }

    /// Column names as written in CSV: somas_tool leaves the first header of its three tables
    /// empty (a pandas index), which spreadsheet workflows may rely on.
    pub fn csv_header(self) -> Vec<&'static str> {
        let mut h = self.columns().to_vec();
        if self != Table::Conflicts {
            if let Some(first) = h.first_mut() {
                *first = "";
            }
        }
        h
    }

    /// Number of rows.
    pub fn rows(self, model: &SomasModel, an: &Analysis) -> usize {
        match self {
            Table::Tensors => model.tensors.len(),
            Table::Nodes => model.nodes.len(),
            Table::Parameters => model.params.id.len(),
            Table::Conflicts => an.conflicts.pairs.len(),
        }
    }
}

/// `0x…` lowercase hex.
pub fn hex(v: u64) -> String {
    format!("0x{v:x}")
}

/// The op id of a node name: the number after the last `-op`.
pub fn op_id(name: &str) -> Option<u64> {
    let n = split_name(name);
    let i = n.rfind("-op")?;
    n.get(i + 3..)?.parse().ok()
}

fn join<I: IntoIterator<Item = String>>(items: I) -> String {
    let mut s = String::new();
    for (i, it) in items.into_iter().enumerate() {
        if i > 0 {
            s.push(';');
        }
        s.push_str(&it);
    }
    s
}

fn tensor_ref(model: &SomasModel, t: u32) -> String {
    format!(
        "%{}T",
        model.tensors.id.get(t as usize).copied().unwrap_or(0)
    )
}

fn input_ref(model: &SomasModel, v: u32) -> String {
    if v & INPUT_PARAM != 0 {
        format!(
            "%{}P",
            model
                .params
                .id
                .get((v & !INPUT_PARAM) as usize)
                .copied()
                .unwrap_or(0)
        )
    } else {
        tensor_ref(model, v)
    }
}

/// The cell at (`row`, `col`) of `table`.
pub fn cell(model: &SomasModel, an: &Analysis, table: Table, row: u32, col: usize) -> Cell {
    match table {
        Table::Tensors => tensor_cell(model, an, row, col),
        Table::Nodes => node_cell(model, an, row, col),
        Table::Parameters => param_cell(model, an, row, col),
        Table::Conflicts => conflict_cell(model, an, row, col),
    }
}

fn tensor_cell(model: &SomasModel, an: &Analysis, row: u32, col: usize) -> Cell {
    let r = row as usize;
    let t = &model.tensors;
    let owner = model.derived.owner.get(r).copied().unwrap_or(NONE);
    let start = an.address(model, row);
    let aligned = t.aligned.get(r).copied().unwrap_or(0);
    let task = an
        .task
        .as_ref()
        .and_then(|m| Some((*m.tensor_addr.get(r)?, *m.tensor_size.get(r)?)))
        .filter(|(a, _)| *a != 0);
    let dests = || model.derived.consumers.row(r);
    match col {
        0 => Cell::Int(u64::from(t.id.get(r).copied().unwrap_or(0))),
        1 => match model.nodes.index.get(owner as usize) {
            Some(&i) => Cell::Int(u64::from(i)),
            None => Cell::Empty,
        },
        2 => Cell::Text(model.tensor_source_name(row).to_string()),
        3 => match model.derived.out_index.get(r) {
            Some(&k) if k != NONE => Cell::Int(u64::from(k)),
            _ => Cell::Empty,
        },
        4 => match model.nodes.stream.get(owner as usize) {
            Some(&s) => Cell::Int(u64::from(s)),
            None => Cell::Empty,
        },
        5 => Cell::Int(start),
        6 => Cell::Text(hex(start)),
        7 => Cell::Int(t.original.get(r).copied().unwrap_or(0)),
        8 => Cell::Int(aligned),
        9 => Cell::Int(start.saturating_add(aligned)),
        10 => Cell::Text(hex(start.saturating_add(aligned))),
        11 => Cell::Int(u64::from(t.start.get(r).copied().unwrap_or(0))),
        12 => Cell::Int(u64::from(t.end.get(r).copied().unwrap_or(0))),
        13 => Cell::Text(t.lifelong.get(r).map_or("", |l| l.as_str()).to_string()),
        14 => Cell::Text(t.kind.get(r).map_or("", |k| k.as_str()).to_string()),
        15 => task.map_or(Cell::Empty, |(a, _)| Cell::Int(a)),
        16 => task.map_or(Cell::Empty, |(a, _)| Cell::Text(hex(a))),
        17 => task.map_or(Cell::Empty, |(_, z)| Cell::Int(z)),
        18 => task.map_or(Cell::Empty, |(a, z)| Cell::Int(a.saturating_add(z))),
        19 => task.map_or(Cell::Empty, |(a, z)| Cell::Text(hex(a.saturating_add(z)))),
        20 => {
            let mut streams: Vec<u32> = dests()
                .iter()
                .filter_map(|&n| model.nodes.stream.get(n as usize).copied())
                .collect();
            streams.sort_unstable();
            streams.dedup();
            Cell::Text(join(streams.iter().map(|s| s.to_string())))
        }
        21 => Cell::Text(join(
            dests().iter().map(|&n| model.node_name(n).to_string()),
        )),
        _ => Cell::Empty,
    }
}

fn node_cell(model: &SomasModel, an: &Analysis, row: u32, col: usize) -> Cell {
    let r = row as usize;
    let n = &model.nodes;
    let index = n.index.get(r).copied().unwrap_or(0);
    let tensors_of = |list: &[u32]| join(list.iter().map(|&v| input_ref(model, v)));
    match col {
        0 => Cell::Text(model.node_name(row).to_string()),
        1 => Cell::Int(u64::from(index)),
        2 => op_id(model.node_name(row)).map_or(Cell::Empty, Cell::Int),
        3 => Cell::Int(u64::from(n.stream.get(r).copied().unwrap_or(0))),
        4 => {
            let all: Vec<u32> = n
                .inputs
                .row(r)
                .iter()
                .filter(|&&v| v & INPUT_PARAM == 0)
                .chain(n.outputs.row(r))
                .chain(n.workspace.row(r))
                .copied()
                .collect();
            Cell::Text(tensors_of(&all))
        }
        5 => {
            let ps: Vec<u32> = n
                .inputs
                .row(r)
                .iter()
                .filter(|&&v| v & INPUT_PARAM != 0)
                .copied()
                .collect();
            Cell::Text(tensors_of(&ps))
        }
        6 => Cell::Text(tensors_of(n.inputs.row(r))),
        7 => Cell::Text(tensors_of(n.outputs.row(r))),
        8 => Cell::Text(tensors_of(n.workspace.row(r))),
        9 => Cell::Int(an.in_use_at(index)),
        10 => Cell::Int(an.total_at(index)),
        11 => Cell::Int(an.in_use_at(index).saturating_add(an.static_bytes)),
        12 => Cell::Int(an.total_at(index).saturating_add(an.static_bytes)),
        _ => Cell::Empty,
    }
}

fn param_cell(model: &SomasModel, an: &Analysis, row: u32, col: usize) -> Cell {
    let r = row as usize;
    let p = &model.params;
    let addr = an.param_addr.get(r).copied().unwrap_or(0);
    let size = p.size.get(r).copied().unwrap_or(0);
    let known = addr != 0;
    match col {
        0 => Cell::Int(u64::from(p.id.get(r).copied().unwrap_or(0))),
        1 => Cell::Text(
            p.name
                .get(r)
                .map_or("", |&n| model.names.get(n))
                .to_string(),
        ),
        2 => Cell::Int(u64::from(p.out_index.get(r).copied().unwrap_or(0))),
        3 if known => Cell::Int(addr),
        4 if known => Cell::Text(hex(addr)),
        5 => Cell::Int(size),
        6 if known => Cell::Int(addr.saturating_add(size)),
        7 if known => Cell::Text(hex(addr.saturating_add(size))),
        8 => Cell::Text(join(
            model
                .derived
                .param_consumers
                .row(r)
                .iter()
                .map(|&n| model.node_name(n).to_string()),
        )),
        _ => Cell::Empty,
    }
}

fn conflict_cell(model: &SomasModel, an: &Analysis, row: u32, col: usize) -> Cell {
    let Some(&(a, b)) = an.conflicts.pairs.get(row as usize) else {
        return Cell::Empty;
    };
    let id = |t: u32| {
        Cell::Int(u64::from(
            model.tensors.id.get(t as usize).copied().unwrap_or(0),
        ))
    };
    let life = |t: u32| {
        Cell::Text(format!(
            "{}-{}",
            an.lo.get(t as usize).copied().unwrap_or(0),
            an.hi.get(t as usize).copied().unwrap_or(0)
        ))
    };
    let range = |t: u32| {
        let (s, e) = model.effective_range(t);
        Cell::Text(format!(
            "{}-{}",
            hex(an.base.saturating_add(s)),
            hex(an.base.saturating_add(e))
        ))
    };
    let (sa, ea) = model.effective_range(a);
    let (sb, eb) = model.effective_range(b);
    match col {
        0 => id(a),
        1 => id(b),
        2 => Cell::Text(model.tensor_source_name(a).to_string()),
        3 => Cell::Text(model.tensor_source_name(b).to_string()),
        4 => life(a),
        5 => life(b),
        6 => range(a),
        7 => range(b),
        8 => Cell::Int(ea.min(eb).saturating_sub(sa.max(sb))),
        9 => {
            let lo = an
                .lo
                .get(a as usize)
                .max(an.lo.get(b as usize))
                .copied()
                .unwrap_or(0);
            let hi = an
                .hi
                .get(a as usize)
                .min(an.hi.get(b as usize))
                .copied()
                .unwrap_or(0);
            Cell::Text(format!("{lo}-{hi}"))
        }
        _ => Cell::Empty,
    }
}

/// The names dictionary for [`crate::table::Column::Sym`] columns (name id → text).
fn name_dict(model: &SomasModel) -> std::sync::Arc<[Box<str>]> {
    (0..model.names.len() as u32)
        .map(|i| Box::<str>::from(model.names.get(i)))
        .collect::<Vec<_>>()
        .into()
}

/// `table` as a typed [`crate::table::Table`] for the views (sort, filter, page in Rust).
///
/// Numbers stay numbers (addresses with kind `hex`), names are interned symbols; the list-valued
/// CSV columns (destinations, inputs) become counts here, since a view shows them per row on
/// demand through the queries.
pub fn to_table(model: &SomasModel, an: &Analysis, table: Table) -> crate::table::Table<'static> {
    use crate::table::{Column as C, Table as T};
    let dict = name_dict(model);
    let sym = |ids: Vec<u32>| C::Sym(ids, dict.clone());
    match table {
        Table::Tensors => {
            let t = &model.tensors;
            let n = t.len();
            let owner = &model.derived.owner;
            let opt = |v: Option<u32>| v.map(u64::from);
            let task = an.task.as_ref();
            let mut conflicts = vec![0u64; n];
            for &(a, b) in &an.conflicts.pairs {
                for x in [a, b] {
                    if let Some(c) = conflicts.get_mut(x as usize) {
                        *c += 1;
                    }
                }
            }
            let kinds: Vec<u32> = t.kind.iter().map(|k| *k as u32).collect();
            let kind_dict: std::sync::Arc<[Box<str>]> = (0..=TensorKind::Gap as u8)
                .map(|k| Box::<str>::from(kind_name(k)))
                .collect::<Vec<_>>()
                .into();
            let ll_dict: std::sync::Arc<[Box<str>]> = [
                Lifelong::None,
                Lifelong::GraphAll,
                Lifelong::GraphStart,
                Lifelong::GraphEnd,
            ]
            .iter()
            .map(|l| Box::<str>::from(l.as_str()))
            .collect::<Vec<_>>()
            .into();
            T::new()
                .with(
                    "TensorId",
                    "int",
                    C::U64(t.id.iter().map(|&x| u64::from(x)).collect()),
                )
                .with(
                    "SourceNodeName",
                    "text",
                    sym((0..n as u32)
                        .map(|r| match owner.get(r as usize) {
                            Some(&o) if o != NONE => {
                                model.nodes.name.get(o as usize).copied().unwrap_or(0)
                            }
                            _ => t.name.get(r as usize).copied().unwrap_or(0),
                        })
                        .collect()),
                )
                .with(
                    "SourceNodeId",
                    "int",
                    C::OptU64(
                        owner
                            .iter()
                            .map(|&o| opt(model.nodes.index.get(o as usize).copied()))
                            .collect(),
                    ),
                )
                .with(
                    "OutputIndex",
                    "int",
                    C::OptU64(
                        model
                            .derived
                            .out_index
                            .iter()
                            .map(|&k| (k != NONE).then_some(u64::from(k)))
                            .collect(),
                    ),
                )
                .with(
                    "SourceStream",
                    "int",
                    C::OptU64(
                        owner
                            .iter()
                            .map(|&o| opt(model.nodes.stream.get(o as usize).copied()))
                            .collect(),
                    ),
                )
                .with(
                    "StartAddr",
                    "hex",
                    C::U64((0..n as u32).map(|r| an.address(model, r)).collect()),
                )
                .with("Size", "bytes", C::U64(t.original.clone()))
                .with("AlignSize", "bytes", C::U64(t.aligned.clone()))
                .with(
                    "EndAddr",
                    "hex",
                    C::U64(
                        (0..n)
                            .map(|r| an.address(model, r as u32).saturating_add(t.aligned[r]))
                            .collect(),
                    ),
                )
                .with(
                    "LifeStart",
                    "int",
                    C::U64(t.start.iter().map(|&x| u64::from(x)).collect()),
                )
                .with(
                    "LifeEnd",
                    "int",
                    C::U64(t.end.iter().map(|&x| u64::from(x)).collect()),
                )
                .with(
                    "AliveFrom",
                    "int",
                    C::U64(an.lo.iter().map(|&x| u64::from(x)).collect()),
                )
                .with(
                    "AliveTo",
                    "int",
                    C::U64(an.hi.iter().map(|&x| u64::from(x)).collect()),
                )
                .with(
                    "LifeLong",
                    "text",
                    C::Sym(t.lifelong.iter().map(|l| *l as u32).collect(), ll_dict),
                )
                .with("TensorType", "text", C::Sym(kinds, kind_dict))
                .with(
                    "TaskStartAddr",
                    "hex",
                    C::OptU64(
                        (0..n)
                            .map(|r| {
                                task.and_then(|m| m.tensor_addr.get(r).copied())
                                    .filter(|&a| a != 0)
                            })
                            .collect(),
                    ),
                )
                .with(
                    "TaskSize",
                    "bytes",
                    C::OptU64(
                        (0..n)
                            .map(|r| {
                                task.and_then(|m| m.tensor_size.get(r).copied())
                                    .filter(|_| {
                                        task.and_then(|m| m.tensor_addr.get(r))
                                            .is_some_and(|&a| a != 0)
                                    })
                            })
                            .collect(),
                    ),
                )
                .with(
                    "Consumers",
                    "int",
                    C::U64(
                        (0..n)
                            .map(|r| model.derived.consumers.row(r).len() as u64)
                            .collect(),
                    ),
                )
                .with("Conflicts", "int", C::U64(conflicts))
        }
        Table::Nodes => {
            let nd = &model.nodes;
            let n = nd.len();
            T::new()
                .with("Name", "text", sym(nd.name.clone()))
                .with(
                    "Index",
                    "int",
                    C::U64(nd.index.iter().map(|&x| u64::from(x)).collect()),
                )
                .with(
                    "OpId",
                    "int",
                    C::OptU64((0..n as u32).map(|r| op_id(model.node_name(r))).collect()),
                )
                .with(
                    "Stream",
                    "int",
                    C::U64(nd.stream.iter().map(|&x| u64::from(x)).collect()),
                )
                .with(
                    "Type",
                    "int",
                    C::U64(nd.kind.iter().map(|&x| u64::from(x)).collect()),
                )
                .with(
                    "Inputs",
                    "int",
                    C::U64((0..n).map(|r| nd.inputs.row(r).len() as u64).collect()),
                )
                .with(
                    "Outputs",
                    "int",
                    C::U64((0..n).map(|r| nd.outputs.row(r).len() as u64).collect()),
                )
                .with(
                    "Workspaces",
                    "int",
                    C::U64((0..n).map(|r| nd.workspace.row(r).len() as u64).collect()),
                )
                .with(
                    "AliveTensorsSize",
                    "bytes",
                    C::U64(nd.index.iter().map(|&i| an.in_use_at(i)).collect()),
                )
                .with(
                    "TotalTensorSize",
                    "bytes",
                    C::U64(nd.index.iter().map(|&i| an.total_at(i)).collect()),
                )
                .with(
                    "InUseMemory",
                    "bytes",
                    C::U64(
                        nd.index
                            .iter()
                            .map(|&i| an.in_use_at(i).saturating_add(an.static_bytes))
                            .collect(),
                    ),
                )
                .with(
                    "TotalMemory",
                    "bytes",
                    C::U64(
                        nd.index
                            .iter()
                            .map(|&i| an.total_at(i).saturating_add(an.static_bytes))
                            .collect(),
                    ),
                )
        }
        Table::Parameters => {
            let p = &model.params;
            let n = p.id.len();
            T::new()
                .with(
                    "Index",
                    "int",
                    C::U64(p.id.iter().map(|&x| u64::from(x)).collect()),
                )
                .with("SourceNodeName", "text", sym(p.name.clone()))
                .with(
                    "OutputIndex",
                    "int",
                    C::U64(p.out_index.iter().map(|&x| u64::from(x)).collect()),
                )
                .with(
                    "StartAddr",
                    "hex",
                    C::OptU64(
                        (0..n)
                            .map(|r| an.param_addr.get(r).copied().filter(|&a| a != 0))
                            .collect(),
                    ),
                )
                .with("Size", "bytes", C::U64(p.size.clone()))
                .with(
                    "Consumers",
                    "int",
                    C::U64(
                        (0..n)
                            .map(|r| model.derived.param_consumers.row(r).len() as u64)
                            .collect(),
                    ),
                )
        }
        Table::Conflicts => {
            let pairs = &an.conflicts.pairs;
            let id = |t: u32| u64::from(model.tensors.id.get(t as usize).copied().unwrap_or(0));
            let name = |t: u32| match model.derived.owner.get(t as usize) {
                Some(&o) if o != NONE => model.nodes.name.get(o as usize).copied().unwrap_or(0),
                _ => model.tensors.name.get(t as usize).copied().unwrap_or(0),
            };
            let lo = |t: u32| u64::from(an.lo.get(t as usize).copied().unwrap_or(0));
            let hi = |t: u32| u64::from(an.hi.get(t as usize).copied().unwrap_or(0));
            let overlap = |&(a, b): &(u32, u32)| {
                let (sa, ea) = model.effective_range(a);
                let (sb, eb) = model.effective_range(b);
                ea.min(eb).saturating_sub(sa.max(sb))
            };
            T::new()
                .with(
                    "TensorA",
                    "int",
                    C::U64(pairs.iter().map(|p| id(p.0)).collect()),
                )
                .with(
                    "TensorB",
                    "int",
                    C::U64(pairs.iter().map(|p| id(p.1)).collect()),
                )
                .with(
                    "NodeA",
                    "text",
                    sym(pairs.iter().map(|p| name(p.0)).collect()),
                )
                .with(
                    "NodeB",
                    "text",
                    sym(pairs.iter().map(|p| name(p.1)).collect()),
                )
                .with(
                    "AliveFromA",
                    "int",
                    C::U64(pairs.iter().map(|p| lo(p.0)).collect()),
                )
                .with(
                    "AliveToA",
                    "int",
                    C::U64(pairs.iter().map(|p| hi(p.0)).collect()),
                )
                .with(
                    "AliveFromB",
                    "int",
                    C::U64(pairs.iter().map(|p| lo(p.1)).collect()),
                )
                .with(
                    "AliveToB",
                    "int",
                    C::U64(pairs.iter().map(|p| hi(p.1)).collect()),
                )
                .with(
                    "StartA",
                    "hex",
                    C::U64(
                        pairs
                            .iter()
                            .map(|p| an.base.saturating_add(model.effective_range(p.0).0))
                            .collect(),
                    ),
                )
                .with(
                    "StartB",
                    "hex",
                    C::U64(
                        pairs
                            .iter()
                            .map(|p| an.base.saturating_add(model.effective_range(p.1).0))
                            .collect(),
                    ),
                )
                .with(
                    "OverlapBytes",
                    "bytes",
                    C::U64(pairs.iter().map(overlap).collect()),
                )
        }
    }
}

fn kind_name(k: u8) -> &'static str {
    [
        TensorKind::Common,
        TensorKind::Workspace,
        TensorKind::OutputOnly,
        TensorKind::GraphOutput,
        TensorKind::GraphInput,
        TensorKind::SummaryInput,
        TensorKind::Union,
        TensorKind::Control,
        TensorKind::Unknown,
        TensorKind::GetNextOutput,
        TensorKind::RefNodeInput,
        TensorKind::RefNodeOutput,
        TensorKind::Gap,
    ]
    .get(k as usize)
    .map_or("", |t| t.as_str())
}
