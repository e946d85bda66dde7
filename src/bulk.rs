//! Answers made of number arrays: what the views ask for at every frame (curve envelopes, visible
//! rectangles, a memory frame). They cross to the page as typed arrays, not JSON, which would
//! cost more than computing them; each answer lists its fields by name here, so the wasm layer
//! converts every such answer with one function and the shapes are tested natively.

/// One named field of a bulk answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Field<'a> {
    /// A number.
    Num(f64),
    /// `Float64Array`.
    F64(&'a [f64]),
    /// `Float32Array`.
    F32(&'a [f32]),
    /// `Uint32Array`.
    U32(&'a [u32]),
    /// `Uint8Array`.
    U8(&'a [u8]),
    /// A string.
    Text(&'a str),
}

/// An answer whose fields cross as typed arrays.
pub trait Bulk {
    /// Every field, by name.
    fn fields(&self) -> Vec<(&'static str, Field<'_>)>;
}

/// `u64` values as `f64` (exact below 2^53: bytes, counts and relative times stay exact).
pub fn f64s(v: &[u64]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

/// Flags as 0 / 1 bytes.
pub fn flags(v: &[bool]) -> Vec<u8> {
    v.iter().map(|&b| u8::from(b)).collect()
}
