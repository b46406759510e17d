//! Floor plans (SPEC §28): an area's plan image, checked by decoding it in
//! full with the `image` crate (so a truncated or disguised file is
//! refused), kept in the database (`area_plan`, one backup and one
//! replication stream with the rest), and served with its own type.

use std::io::Cursor;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Binary, Int4, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use image::{ImageFormat, ImageReader, Limits};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::schema::area_plan;
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

pub static REPLACE_PLAN: Operation = Operation::new("area.replace_plan", &[Role::Admin]);

/// The largest plan file (5 MiB): larger is 413.
pub const MAX_BYTES: usize = 5 * 1024 * 1024;
/// The widest and tallest plan, pixels.
pub const MAX_SIDE: u32 = 8_000;

/// The three kinds of image a plan may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanFormat {
    Png,
    Jpeg,
    Webp,
}

impl PlanFormat {
    /// From a `Content-Type` (its essence, any case; parameters ignored).
    pub fn of_content_type(raw: &str) -> Option<Self> {
        match raw.split(';').next().unwrap_or("").trim().to_ascii_lowercase().as_str() {
            "image/png" => Some(PlanFormat::Png),
            "image/jpeg" => Some(PlanFormat::Jpeg),
            "image/webp" => Some(PlanFormat::Webp),
            _ => None,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            PlanFormat::Png => "image/png",
            PlanFormat::Jpeg => "image/jpeg",
            PlanFormat::Webp => "image/webp",
        }
    }

    fn image_format(self) -> ImageFormat {
        match self {
            PlanFormat::Png => ImageFormat::Png,
            PlanFormat::Jpeg => ImageFormat::Jpeg,
            PlanFormat::Webp => ImageFormat::WebP,
        }
    }
}

fn invalid(reason: impl Into<String>) -> ApiError {
    ApiError::worded(ErrorCode::InvalidImage, json!({ "field": "plan", "reason": reason.into() }))
}

/// The 413 of a plan over [`MAX_BYTES`].
pub fn too_large() -> ApiError {
    ApiError::new(ErrorCode::PayloadTooLarge, format!("a plan must be at most {MAX_BYTES} bytes"))
        .with_details(json!({ "field": "plan", "maxBytes": MAX_BYTES }))
}

/// A plan image that decoded in full within the limits: only such a value
/// is ever stored.
#[derive(Clone)]
pub struct PlanImage {
    format: PlanFormat,
    bytes: Vec<u8>,
    width: u32,
    height: u32,
    etag: String,
}

impl std::fmt::Debug for PlanImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PlanImage({}, {}x{}, {} bytes)",
            self.format.content_type(),
            self.width,
            self.height,
            self.bytes.len()
        )
    }
}

impl PlanImage {
    /// Checks `bytes` sent as `content_type`: a PNG, JPEG or WebP of that
    /// very type, at most [`MAX_BYTES`] (else 413) and [`MAX_SIDE`] pixels
    /// a side, decoded to its last pixel (else 400 `INVALID_IMAGE`).
    pub fn decode(content_type: &str, bytes: Vec<u8>) -> Result<Self, ApiError> {
        if bytes.len() > MAX_BYTES {
            return Err(too_large());
        }
        let format = PlanFormat::of_content_type(content_type)
            .ok_or_else(|| invalid("the type must be image/png, image/jpeg or image/webp"))?;
        let mut reader = ImageReader::with_format(Cursor::new(&bytes), format.image_format());
        let mut limits = Limits::default();
        limits.max_image_width = Some(MAX_SIDE);
        limits.max_image_height = Some(MAX_SIDE);
        reader.limits(limits);
        let (width, height) = reader.into_dimensions().map_err(|e| invalid(e.to_string()))?;
        if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
            return Err(invalid(format!("at most {MAX_SIDE} x {MAX_SIDE} pixels")));
        }
        let mut reader = ImageReader::with_format(Cursor::new(&bytes), format.image_format());
        let mut limits = Limits::default();
        limits.max_image_width = Some(MAX_SIDE);
        limits.max_image_height = Some(MAX_SIDE);
        reader.limits(limits);
        reader.decode().map_err(|e| invalid(e.to_string()))?;
        // A JPEG decoder may fill a cut-off scan with grey; a whole JPEG
        // ends with its end-of-image marker.
        if format == PlanFormat::Jpeg && !bytes.ends_with(&[0xFF, 0xD9]) {
            return Err(invalid("the JPEG file is cut off"));
        }
        let etag = Sha256::digest(&bytes).iter().take(16).map(|b| format!("{b:02x}")).collect();
        Ok(PlanImage { format, bytes, width, height, etag })
    }

    pub fn etag(&self) -> &str {
        &self.etag
    }
}

/// A plan as the API answers it (the image itself is `GET /areas/{code}/plan.img`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema, QueryableByName)]
#[serde(rename_all = "camelCase")]
pub struct PlanInfo {
    #[diesel(sql_type = Text)]
    pub area: String,
    #[diesel(sql_type = Text)]
    pub content_type: String,
    #[diesel(sql_type = Int4)]
    pub width: i32,
    #[diesel(sql_type = Int4)]
    pub height: i32,
    /// Changes with the image (its SHA-256, shortened): the `ETag` it is served with.
    #[diesel(sql_type = Text)]
    pub etag: String,
}

/// `PUT /api/areas/{code}/plan`, and the upload on `/admin/areas`.
#[derive(Debug, Clone)]
pub struct ReplacePlan {
    pub area: String,
    pub image: PlanImage,
}

impl Command for ReplacePlan {
    type Output = PlanInfo;

    fn operation(&self) -> &'static Operation {
        &REPLACE_PLAN
    }

    fn fingerprint(&self) -> serde_json::Value {
        json!({ "area": self.area, "etag": self.image.etag })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<PlanInfo, CommandError> {
        replace(conn, &self.area, &self.image, ctx.now).await
    }
}

/// Stores the area's plan in place of the one before, in one statement;
/// an area that does not exist is a 404 (nothing stored).
async fn replace(conn: &mut Conn, area: &str, image: &PlanImage, now: DateTime<Utc>) -> Result<PlanInfo, CommandError> {
    let stored: Option<PlanInfo> = diesel::sql_query(
        "INSERT INTO area_plan (area, content_type, image, width, height, etag, updated_at)
         SELECT code, $2, $3, $4, $5, $6, $7 FROM area WHERE code = $1
         ON CONFLICT (area) DO UPDATE
            SET content_type = EXCLUDED.content_type, image = EXCLUDED.image, width = EXCLUDED.width,
                height = EXCLUDED.height, etag = EXCLUDED.etag, updated_at = EXCLUDED.updated_at
         RETURNING area, content_type, width, height, etag",
    )
    .bind::<Text, _>(area)
    .bind::<Text, _>(image.format.content_type())
    .bind::<Binary, _>(&image.bytes)
    .bind::<Int4, _>(image.width as i32)
    .bind::<Int4, _>(image.height as i32)
    .bind::<Text, _>(&image.etag)
    .bind::<Timestamptz, _>(now)
    .get_result(conn)
    .await
    .optional()?;
    stored.ok_or_else(|| CommandError::Invalid(ApiError::not_found("area")))
}

/// The plan of an area, without its bytes.
pub async fn info(conn: &mut Conn, area: &str) -> QueryResult<Option<PlanInfo>> {
    area_plan::table
        .find(area)
        .select((area_plan::area, area_plan::content_type, area_plan::width, area_plan::height, area_plan::etag))
        .first::<(String, String, i32, i32, String)>(conn)
        .await
        .optional()
        .map(|row| {
            row.map(|(area, content_type, width, height, etag)| PlanInfo { area, content_type, width, height, etag })
        })
}

/// An area's plan image: its type, bytes and tag.
pub struct StoredPlan {
    pub content_type: String,
    pub etag: String,
    pub image: Vec<u8>,
}

/// An area's plan image with its type and tag, in one statement.
pub async fn image(conn: &mut Conn, area: &str) -> QueryResult<Option<StoredPlan>> {
    area_plan::table
        .find(area)
        .select((area_plan::content_type, area_plan::etag, area_plan::image))
        .first::<(String, String, Vec<u8>)>(conn)
        .await
        .optional()
        .map(|row| row.map(|(content_type, etag, image)| StoredPlan { content_type, etag, image }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        image::RgbImage::new(w, h).write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn a_whole_png_passes_and_a_cut_or_disguised_one_does_not() {
        let whole = png(40, 30);
        let plan = PlanImage::decode("image/png", whole.clone()).unwrap();
        assert_eq!((plan.width, plan.height), (40, 30));
        let cut = whole[..whole.len() - 20].to_vec();
        assert_eq!(PlanImage::decode("image/png", cut).unwrap_err().code, ErrorCode::InvalidImage);
        assert_eq!(PlanImage::decode("image/jpeg", whole.clone()).unwrap_err().code, ErrorCode::InvalidImage);
        assert_eq!(PlanImage::decode("image/gif", whole).unwrap_err().code, ErrorCode::InvalidImage);
        assert_eq!(
            PlanImage::decode("image/png", vec![0; MAX_BYTES + 1]).unwrap_err().code,
            ErrorCode::PayloadTooLarge
        );
    }

    #[test]
    fn too_wide_a_plan_is_refused_before_it_is_decoded() {
        assert_eq!(PlanImage::decode("image/png", png(8_001, 1)).unwrap_err().code, ErrorCode::InvalidImage);
    }
}
