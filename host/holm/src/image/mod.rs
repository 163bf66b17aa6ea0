//! The box image (placeholder until the image module lands).

/// What goes into an image besides the base: apps and packages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageRequest {
    /// Apps from the catalogue.
    pub apps: Vec<String>,
    /// Debian packages.
    pub packages: Vec<String>,
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
