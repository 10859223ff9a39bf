//! A figure's three files from one drawing: plotters draws it once as SVG, laid out with
//! the embedded Ubuntu Light font (plotters measures text with it through ab_glyph); the
//! SVG names that font, and resvg (PNG) and svg2pdf (PDF, the font embedded as a subset)
//! render it with that same font, so that the text is spaced as it was measured.
//!
//! plotters' own bitmap text is not used: it places every glyph at its pen position
//! without the glyph's left side bearing, which spaces letters unevenly ("traj ectory").

use std::path::Path;
use std::sync::{Arc, OnceLock};

use ab_glyph::Font;
use resvg::{tiny_skia, usvg};

/// The embedded font every figure is laid out and rendered with.
pub(super) const FONT_DATA: &[u8] = epaint_default_fonts::UBUNTU_LIGHT;

/// What the renderer needs of the embedded font: its database, family name and weight,
/// and the factor from plotters' SVG font size to the size it measured text with.
struct EmbeddedFont {
    database: Arc<usvg::fontdb::Database>,
    family: String,
    weight: u16,
    size_factor: f64,
}

/// plotters writes `font-size = size / 1.24` in SVG, while ab_glyph measured the text at
/// a pixel height `size` = ascent − descent: the em it measured with is
/// `size · units_per_em / (ascent − descent)`.
const PLOTTERS_SVG_SIZE_RATIO: f64 = 1.24;

fn embedded_font() -> Result<&'static EmbeddedFont, String> {
    static FONT: OnceLock<Result<EmbeddedFont, String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let metrics = ab_glyph::FontRef::try_from_slice(FONT_DATA)
            .map_err(|e| format!("the embedded font could not be read: {e}"))?;
        let units_per_em = f64::from(metrics.units_per_em().unwrap_or(1000.0));
        let height = f64::from(metrics.height_unscaled());
        let mut database = usvg::fontdb::Database::new();
        database.load_font_data(FONT_DATA.to_vec());
        let face = database
            .faces()
            .next()
            .ok_or("the embedded font holds no face")?;
        let family = face
            .families
            .first()
            .map(|(name, _)| name.clone())
            .ok_or("the embedded font has no family name")?;
        let weight = face.weight.0;
        database.set_sans_serif_family(family.clone());
        Ok(EmbeddedFont {
            database: Arc::new(database),
            family,
            weight,
            size_factor: PLOTTERS_SVG_SIZE_RATIO * units_per_em / height.max(1.0),
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The family name the SVG files give their text (the embedded font's).
pub fn font_family() -> Result<String, String> {
    embedded_font().map(|f| f.family.clone())
}

/// plotters' SVG with its text naming the embedded font (family and weight, generic
/// fallback after it) at the size the text was measured with.
fn with_embedded_font(svg: &str, font: &EmbeddedFont) -> String {
    let family = format!(
        "font-family=\"'{}', sans-serif\" font-weight=\"{}\"",
        font.family, font.weight
    );
    let named = svg.replace("font-family=\"sans-serif\"", &family);
    rescale_font_sizes(&with_stand_ins(&named), font.size_factor)
}

/// Characters the embedded font has no glyph for, and what is drawn in their place (a
/// norm's double bar as two bars).
const STAND_INS: [(&str, &str); 1] = [("‖", "||")];

/// `svg` with every character of [`STAND_INS`] replaced.
fn with_stand_ins(svg: &str) -> String {
    STAND_INS
        .iter()
        .fold(svg.to_string(), |text, (missing, drawn)| {
            text.replace(missing, drawn)
        })
}

/// Multiplies every `font-size="…"` value by `factor`.
fn rescale_font_sizes(svg: &str, factor: f64) -> String {
    const KEY: &str = "font-size=\"";
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(start) = rest.find(KEY) {
        let (head, tail) = rest.split_at(start + KEY.len());
        out.push_str(head);
        let end = tail.find('"').unwrap_or(tail.len());
        match tail[..end].parse::<f64>() {
            Ok(size) => out.push_str(&format!("{:.2}", size * factor)),
            Err(_) => out.push_str(&tail[..end]),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The three files of a figure drawn as `svg` by plotters.
pub(super) struct Rendered {
    pub(super) svg: String,
    pub(super) png: Vec<u8>,
    pub(super) pdf: Vec<u8>,
}

/// Renders plotters' SVG into the SVG, PNG and PDF files' bytes.
pub(super) fn render_svg(svg: &str) -> Result<Rendered, String> {
    let font = embedded_font()?;
    let svg = with_embedded_font(svg, font);
    let options = usvg::Options {
        fontdb: Arc::clone(&font.database),
        font_family: font.family.clone(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(&svg, &options).map_err(|e| format!("SVG: {e}"))?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| format!("no {}×{} image", size.width(), size.height()))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::identity(),
        &mut pixmap.as_mut(),
    );
    let png = pixmap.encode_png().map_err(|e| format!("PNG: {e}"))?;
    let pdf = svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions::default(),
    )
    .map_err(|e| format!("PDF: {e}"))?;
    Ok(Rendered { svg, png, pdf })
}

/// Writes `dir/<stem>.{svg,png,pdf}`; the error names the file that failed.
pub(super) fn write_files(
    rendered: &Rendered,
    dir: &Path,
    stem: &str,
) -> Result<(), (String, String)> {
    let files: [(&str, &[u8]); 3] = [
        ("svg", rendered.svg.as_bytes()),
        ("png", &rendered.png),
        ("pdf", &rendered.pdf),
    ];
    for (extension, bytes) in files {
        let path = dir.join(format!("{stem}.{extension}"));
        std::fs::write(&path, bytes).map_err(|e| (path.display().to_string(), e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn font_sizes_are_rescaled_and_other_text_kept() {
        let svg = r#"<text font-size="10" x="1">a</text><text font-size="x">b</text>"#;
        assert_eq!(
            rescale_font_sizes(svg, 1.5),
            r#"<text font-size="15.00" x="1">a</text><text font-size="x">b</text>"#
        );
    }

    #[test]
    fn characters_without_a_glyph_get_their_stand_in_and_the_font_has_the_stand_ins() {
        use ab_glyph::Font as _;
        let font = ab_glyph::FontRef::try_from_slice(FONT_DATA).unwrap();
        for (missing, drawn) in STAND_INS {
            assert!(
                missing.chars().all(|c| font.glyph_id(c).0 == 0),
                "{missing}"
            );
            assert!(drawn.chars().all(|c| font.glyph_id(c).0 != 0), "{drawn}");
        }
        assert_eq!(with_stand_ins("Σ ‖Δx‖ Δt"), "Σ ||Δx|| Δt");
    }

    #[test]
    fn the_embedded_font_is_found_by_its_family_name() {
        let font = embedded_font().unwrap();
        assert!(font.family.contains("Ubuntu"), "{}", font.family);
        assert!(font.size_factor > 1.0 && font.size_factor < 1.3);
    }
}
