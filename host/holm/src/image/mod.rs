//! The box image (placeholder until the image module lands).

/// What goes into an image besides the base: apps and packages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageRequest {
    /// Apps from the catalogue.
    pub apps: Vec<String>,
    /// Debian packages.
    pub packages: Vec<String>,
}

impl ImageRequest {
    /// Checks apps and packages (placeholder).
    pub fn checked(apps: &[String], packages: &[String]) -> Result<Self, ImageError> {
        Ok(Self { apps: apps.to_vec(), packages: packages.to_vec() })
    }
}

impl ImageError {
    /// The request field the error is about.
    pub fn field(&self) -> &'static str {
        "spec.apps"
    }
}

/// What preparing an image can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// Anything.
    #[error("{0}")]
    Other(String),
}

/// Placeholder.
pub async fn ensure_image(
    _docker: &bollard::Docker,
    _request: &ImageRequest,
    _progress: &mut (dyn FnMut(String) + Send),
) -> Result<String, ImageError> {
    Ok("holm-box:dev".into())
}

/// Placeholder.
pub async fn list_images(
    _docker: &bollard::Docker,
) -> Result<Vec<holm_proto::host::ImageInfo>, ImageError> {
    Ok(vec![])
}

/// Placeholder.
pub async fn ensure_base(
    _docker: &bollard::Docker,
    _progress: &mut (dyn FnMut(String) + Send),
) -> Result<(), ImageError> {
    Ok(())
}

/// Placeholder.
pub fn catalogue() -> Vec<holm_proto::host::AppInfo> {
    vec![]
}
pub const BASE_IMAGE: &str = "debian:bookworm-slim";
