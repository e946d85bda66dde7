//! somas_tool's two memory charts (`StatisticInfo/InUseMemory` and `TotalMemory`) as SVG and as
//! PNG: step curves of byte counts over execution order, with a title, a legend, gridlines
//! labelled in GB and the execution-index axis.
//!
//! Both are reduced to one column per pixel (the SVG to at most 1000 columns) with exact min/max
//! envelopes from [`crate::chart::step_envelope`], so a one-node peak is never lost.
//!
//! The PNG is drawn with integer arithmetic only (`embedded-graphics` primitives, its bitmap fonts
//! compiled in, no anti-aliasing) and encoded by the `png` crate, so the same curves give the same
//! bytes natively and in wasm, with any number of threads, and no system font is ever read.
//! Layout of the PNG: [`PNG_WIDTH`] × [`PNG_HEIGHT`] pixels, white background; the plot area spans
//! the pixel columns `PLOT_LEFT..PLOT_RIGHT` and rows `PLOT_TOP..=PLOT_BOTTOM`, where row
//! `PLOT_BOTTOM` is 0 bytes and row `PLOT_TOP` is the largest value of any series.

use super::somas::gb;
use crate::chart::step_envelope;
use embedded_graphics::mono_font::ascii::{FONT_10X20, FONT_7X14, FONT_8X13};
use embedded_graphics::mono_font::{MonoFont, MonoTextStyle};
use embedded_graphics::pixelcolor::Rgb888;
use embedded_graphics::prelude::*;
use embedded_graphics::primitives::{PrimitiveStyle, Rectangle};
use embedded_graphics::text::{Alignment, Baseline, Text, TextStyleBuilder};
use std::fmt::Write as _;

/// A chart series: legend text, one value per execution index, line colour.
pub struct Series<'a> {
    /// Legend text.
    pub name: &'a str,
    /// One value per execution index.
    pub values: &'a [u64],
    /// Line colour as red, green, blue.
    pub color: [u8; 3],
}

impl Series<'_> {
    fn css(&self) -> String {
        let [r, g, b] = self.color;
        format!("#{r:02x}{g:02x}{b:02x}")
    }
}

/// The largest value of any series (at least 1, so an empty chart still has a scale).
fn top_value(series: &[Series<'_>]) -> u64 {
    series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1)
}

/// A step chart of `series` over execution order as a standalone SVG (at most 1000 columns).
pub fn curve_svg(title: &str, series: &[Series<'_>]) -> String {
    let (w, h, ml, mr, mt, mb) = (1200.0f64, 420.0f64, 90.0, 20.0, 40.0, 40.0);
    let n = series.iter().map(|s| s.values.len()).max().unwrap_or(0);
    let top = top_value(series);
    let cols = n.clamp(1, 1000);
    let pw = w - ml - mr;
    let ph = h - mt - mb;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(o, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
        w / 2.0,
        xml(title)
    );
    for k in 0..=4u64 {
        let v = top / 4 * k;
        let y = mt + ph - ph * (v as f64 / top as f64);
        let _ = writeln!(
            o,
            r##"<line x1="{ml}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            ml + pw,
            ml - 6.0,
            y + 4.0,
            gb(v)
        );
    }
    let _ = writeln!(
        o,
        r#"<text x="{}" y="{}" text-anchor="middle">execution index (0 – {})</text>"#,
        ml + pw / 2.0,
        h - 10.0,
        n.saturating_sub(1)
    );
    for (k, s) in series.iter().enumerate() {
        let xs: Vec<i64> = (0..s.values.len() as i64).collect();
        let env = step_envelope(&xs, s.values, 0, n as i64, cols);
        let mut pts = String::new();
        for c in 0..cols {
            if !env.defined.get(c).copied().unwrap_or(false) {
                continue;
            }
            let x0 = ml + pw * c as f64 / cols as f64;
            let x1 = ml + pw * (c + 1) as f64 / cols as f64;
            let v = env.max.get(c).copied().unwrap_or(0);
            let y = mt + ph - ph * (v as f64 / top as f64);
            let _ = write!(pts, "{x0:.1},{y:.1} {x1:.1},{y:.1} ");
        }
        let _ = writeln!(
            o,
            r#"<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>"#,
            s.css(),
            pts.trim_end()
        );
        let ly = mt + 16.0 * k as f64 + 8.0;
        let _ = writeln!(
            o,
            r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            ml + 10.0,
            ml + 30.0,
            s.css(),
            ml + 36.0,
            ly + 4.0,
            xml(s.name)
        );
    }
    o.push_str("</svg>\n");
    o
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Width of the PNG charts in pixels.
pub const PNG_WIDTH: u32 = 1200;
/// Height of the PNG charts in pixels.
pub const PNG_HEIGHT: u32 = 480;
/// First pixel column of the plot area.
pub const PLOT_LEFT: u32 = 100;
/// One past the last pixel column of the plot area.
pub const PLOT_RIGHT: u32 = 1170;
/// Pixel row of the largest value.
pub const PLOT_TOP: u32 = 80;
/// Pixel row of 0 bytes.
pub const PLOT_BOTTOM: u32 = 420;

const INK: Rgb888 = Rgb888::new(0x22, 0x22, 0x22);
const AXIS: Rgb888 = Rgb888::new(0x44, 0x44, 0x44);
const GRID: Rgb888 = Rgb888::new(0xdd, 0xdd, 0xdd);
const MUTED: Rgb888 = Rgb888::new(0x55, 0x55, 0x55);

/// An RGB pixel buffer that `embedded-graphics` draws into; pixels outside are dropped.
struct Canvas {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Canvas {
    fn new(width: u32, height: u32) -> Canvas {
        Canvas {
            width,
            height,
            rgb: vec![255; width as usize * height as usize * 3], // white
        }
    }

    /// Fills the rectangle of columns `x0..x1` and rows `y0..y1` (clipped to the canvas).
    fn fill(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, color: Rgb888) {
        let (w, h) = (
            x1.saturating_sub(x0).max(0) as u32,
            y1.saturating_sub(y0).max(0) as u32,
        );
        let _ = Rectangle::new(Point::new(x0, y0), Size::new(w, h))
            .into_styled(PrimitiveStyle::with_fill(color))
            .draw(self);
    }

    fn text(&mut self, s: &str, at: Point, font: &MonoFont<'_>, color: Rgb888, align: Alignment) {
        let style = TextStyleBuilder::new()
            .alignment(align)
            .baseline(Baseline::Middle)
            .build();
        let _ = Text::with_text_style(s, at, MonoTextStyle::new(font, color), style).draw(self);
    }

    fn png(&self) -> Result<Vec<u8>, png::EncodingError> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, self.width, self.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::High);
        let mut w = enc.write_header()?;
        w.write_image_data(&self.rgb)?;
        w.finish()?;
        Ok(out)
    }
}

impl OriginDimensions for Canvas {
    fn size(&self) -> Size {
        Size::new(self.width, self.height)
    }
}

impl DrawTarget for Canvas {
    type Color = Rgb888;
    type Error = std::convert::Infallible;

    fn draw_iter<I>(&mut self, pixels: I) -> Result<(), Self::Error>
    where
        I: IntoIterator<Item = Pixel<Self::Color>>,
    {
        for Pixel(p, c) in pixels {
            let (Ok(x), Ok(y)) = (u32::try_from(p.x), u32::try_from(p.y)) else {
                continue;
            };
            if x >= self.width || y >= self.height {
                continue;
            }
            let i = (y as usize * self.width as usize + x as usize) * 3;
            if let Some(px) = self.rgb.get_mut(i..i + 3) {
                px.copy_from_slice(&[c.r(), c.g(), c.b()]);
            }
        }
        Ok(())
    }
}

/// The pixel row of `v` on a scale whose top row is `top` (rounded to the nearest row).
fn row_of(v: u64, top: u64) -> i32 {
    let ph = u128::from(PLOT_BOTTOM - PLOT_TOP);
    let up = (u128::from(v.min(top)) * ph + u128::from(top) / 2) / u128::from(top.max(1));
    PLOT_BOTTOM as i32 - up as i32
}

/// The smallest of 1, 2, 5, 10, 20, 50, … that cuts `0..=last` into at most ten steps.
fn tick_step(last: usize) -> usize {
    let mut unit = 1usize;
    loop {
        for m in [1, 2, 5] {
            let step = unit.saturating_mul(m);
            if last / step <= 10 || step == usize::MAX {
                return step.max(1);
            }
        }
        unit = unit.saturating_mul(10);
    }
}

/// A step chart of `series` over execution order as a PNG of [`PNG_WIDTH`] × [`PNG_HEIGHT`]
/// pixels: the pixels of [`curve_pixels`], encoded.
pub fn curve_png(
    title: &str,
    note: &str,
    series: &[Series<'_>],
) -> Result<Vec<u8>, png::EncodingError> {
    draw(title, note, series).png()
}

/// The pixels of [`curve_png`]'s chart before encoding: [`PNG_WIDTH`] × [`PNG_HEIGHT`] RGB
/// triples, row by row from the top. The encoding (the `png` crate's, at its high compression)
/// costs many times the drawing, and its input is an image of a fixed size whatever the dump, so
/// the fuzz targets draw every chart through this and leave the encoding to the tests.
pub fn curve_pixels(title: &str, note: &str, series: &[Series<'_>]) -> Vec<u8> {
    draw(title, note, series).rgb
}

/// Draws the chart: `title` at the top, `note` (if any) under it, the legend above the plot, five
/// gridlines labelled in GB, and the execution index under the plot. Each pixel column of the plot
/// shows the exact range of values of its execution indices, joined to its neighbours, 2 px wide;
/// the series are drawn in order, so the last one is on top where they meet.
fn draw(title: &str, note: &str, series: &[Series<'_>]) -> Canvas {
    let mut c = Canvas::new(PNG_WIDTH, PNG_HEIGHT);
    let (left, right) = (PLOT_LEFT as i32, PLOT_RIGHT as i32);
    let (top_row, bottom) = (PLOT_TOP as i32, PLOT_BOTTOM as i32);
    let mid = PNG_WIDTH as i32 / 2;
    c.text(
        title,
        Point::new(mid, 16),
        &FONT_10X20,
        INK,
        Alignment::Center,
    );
    if !note.is_empty() {
        c.text(
            note,
            Point::new(mid, 38),
            &FONT_7X14,
            MUTED,
            Alignment::Center,
        );
    }
    // Legend: a swatch and the name of each series, left to right above the plot.
    let mut x = left;
    for s in series {
        let [r, g, b] = s.color;
        c.fill(x, 57, x + 28, 61, Rgb888::new(r, g, b));
        c.text(
            s.name,
            Point::new(x + 36, 58),
            &FONT_8X13,
            INK,
            Alignment::Left,
        );
        x += 36 + 8 * s.name.chars().count() as i32 + 32;
    }
    let n = series.iter().map(|s| s.values.len()).max().unwrap_or(0);
    let top = top_value(series);
    // Gridlines at 0, ¼, ½, ¾ and all of the largest value, labelled in GB.
    for k in 0..=4u64 {
        let v = u64::try_from(u128::from(top) * u128::from(k) / 4).unwrap_or(top);
        let y = row_of(v, top);
        c.fill(left, y, right, y + 1, GRID);
        c.text(
            &gb(v),
            Point::new(left - 8, y),
            &FONT_7X14,
            INK,
            Alignment::Right,
        );
    }
    // Execution-index ticks at round numbers (multiples of 1, 2 or 5 × 10^k), at most eleven.
    let cols = (right - left) as usize;
    let last = n.saturating_sub(1);
    let step = tick_step(last);
    for i in (0..=last).step_by(step) {
        let x = if n <= 1 {
            left
        } else {
            left + ((i as u128 * cols as u128 + cols as u128 / 2) / n as u128) as i32
        };
        c.fill(x, bottom + 1, x + 1, bottom + 6, AXIS);
        c.text(
            &i.to_string(),
            Point::new(x, bottom + 14),
            &FONT_7X14,
            INK,
            Alignment::Center,
        );
    }
    c.text(
        &format!("execution index (0 to {last})"),
        Point::new((left + right) / 2, bottom + 40),
        &FONT_8X13,
        INK,
        Alignment::Center,
    );
    // The plot frame: left and bottom axes.
    c.fill(left - 1, top_row - 8, left, bottom + 1, AXIS);
    c.fill(left - 1, bottom, right, bottom + 1, AXIS);
    for s in series {
        let [r, g, b] = s.color;
        let color = Rgb888::new(r, g, b);
        let xs: Vec<i64> = (0..s.values.len() as i64).collect();
        let env = step_envelope(&xs, s.values, 0, n as i64, cols);
        let mut prev_last: Option<u64> = None;
        for col in 0..cols {
            if !env.defined.get(col).copied().unwrap_or(false) {
                prev_last = None;
                continue;
            }
            let (mut lo, mut hi) = (
                env.min.get(col).copied().unwrap_or(0),
                env.max.get(col).copied().unwrap_or(0),
            );
            // Join the previous column's last value to this one's values (the step's riser).
            if let Some(p) = prev_last {
                lo = lo.min(p);
                hi = hi.max(p);
            }
            prev_last = env.last.get(col).copied();
            let x = left + col as i32;
            c.fill(x, row_of(hi, top) - 1, x + 2, row_of(lo, top) + 1, color);
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_at_most_eleven() {
        assert_eq!(tick_step(0), 1);
        assert_eq!(tick_step(13), 2);
        assert_eq!(tick_step(19_999), 2_000);
        assert_eq!(tick_step(100), 10);
        assert_eq!(tick_step(109), 10);
        assert_eq!(tick_step(110), 20);
        assert!(usize::MAX / tick_step(usize::MAX) <= 10);
    }

    #[test]
    fn rows_span_the_plot() {
        assert_eq!(row_of(0, 1000), PLOT_BOTTOM as i32);
        assert_eq!(row_of(1000, 1000), PLOT_TOP as i32);
        assert_eq!(row_of(500, 1000), 250);
        // Values above the scale are clamped to its top.
        assert_eq!(row_of(u64::MAX, 7), PLOT_TOP as i32);
    }

    #[test]
    fn the_png_holds_exactly_the_pixels_drawn() {
        // Two execution indices, 0 bytes then 9: the first half of the plot's columns at the
        // bottom row, the second half at the top row (the module's layout), white between.
        let values = [0u64, 9];
        let color = [10, 200, 30];
        let s = [Series {
            name: "x",
            values: &values,
            color,
        }];
        let pixels = curve_pixels("t", "n", &s);
        let png = curve_png("t", "n", &s).unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(&png))
            .read_info()
            .unwrap();
        let mut decoded = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut decoded).unwrap();
        assert_eq!((info.width, info.height), (PNG_WIDTH, PNG_HEIGHT));
        assert_eq!(info.color_type, png::ColorType::Rgb);
        // Compared as one flag: a failing assert_eq would print both 1.7 MB images.
        let same = decoded.get(..info.buffer_size()) == Some(&pixels[..]);
        assert!(same, "the decoded PNG is not the drawn pixels");
        let at = |x: u32, y: u32| {
            let i = (y * PNG_WIDTH + x) as usize * 3;
            [pixels[i], pixels[i + 1], pixels[i + 2]]
        };
        let quarter = (PLOT_RIGHT - PLOT_LEFT) / 4;
        assert_eq!(at(PLOT_LEFT + quarter, PLOT_BOTTOM), color);
        assert_eq!(at(PLOT_LEFT + 3 * quarter, PLOT_TOP), color);
        assert_eq!(at(PLOT_LEFT + quarter, 200), [255, 255, 255]);
        assert_eq!(pixels.len(), (PNG_WIDTH * PNG_HEIGHT * 3) as usize);
    }

    #[test]
    fn an_empty_chart_is_still_a_png_of_the_stated_size() {
        let png = curve_png("t", "", &[]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR: width and height, big-endian, after the length and the chunk type.
        assert_eq!(&png[16..20], &PNG_WIDTH.to_be_bytes());
        assert_eq!(&png[20..24], &PNG_HEIGHT.to_be_bytes());
        let values = [0u64, 5, 3];
        let s = [Series {
            name: "x",
            values: &values,
            color: [1, 2, 3],
        }];
        assert_eq!(
            curve_png("t", "n", &s).unwrap(),
            curve_png("t", "n", &s).unwrap()
        );
    }
}
