//! Files in a box. One convention: a path in a box is written `BOX:/PATH`,
//! as `holm cp` takes it, so `holm ls`, `holm rm`, `holm mv`, `holm mkdir`
//! and `holm cat` read like their Unix namesakes. A word without a colon is
//! a box: `holm ls` lists boxes and `holm rm BOX` removes one, while
//! `holm ls BOX:/root` lists a directory and `holm rm BOX:/tmp/x` removes a
//! file.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use futures_util::StreamExt;
use holm_client::Client;
use holm_proto::ApiError;
use holm_proto::guest::FileType;

use crate::output;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// Copy a file to or from a box: `holm cp FILE BOX:PATH` or `holm cp BOX:PATH FILE`.
    Cp(CpArgs),
    /// Write files in a box (BOX:/PATH...) to standard output.
    Cat(CatArgs),
    /// Make directories in a box (BOX:/PATH...), with their parents.
    Mkdir(MkdirArgs),
    /// Move or rename a path within a box: BOX:/FROM BOX:/TO.
    Mv(MvArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Cp(a) => cp(c, a, json).await,
            Self::Cat(a) => cat(c, a).await,
            Self::Mkdir(a) => mkdir(c, a, json).await,
            Self::Mv(a) => mv(c, a, json).await,
        }
    }
}

/// A path in a box: `BOX:/PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxPath {
    /// The box id.
    pub r#box: String,
    /// The path as given; the box refuses one that is not absolute.
    pub path: String,
}

impl BoxPath {
    /// Reads `BOX:PATH`: a box id (`box_…`) before the first colon. Any path
    /// is taken, so the box itself refuses a relative one, in the one error
    /// shape.
    pub fn parse(spec: &str) -> Option<Self> {
        let (b, p) = spec.split_once(':')?;
        (b.starts_with("box_") && !b.contains('/'))
            .then(|| Self { r#box: b.to_owned(), path: p.to_owned() })
    }

    /// Like [`BoxPath::parse`], or an error that shows the convention.
    pub fn required(spec: &str, what: &str) -> anyhow::Result<Self> {
        Self::parse(spec).ok_or_else(|| {
            ApiError::invalid(format!("{what} {spec:?} is not BOX:/PATH"))
                .with_hint(format!(
                    "a path in a box is written BOX:/PATH, such as box_7hq3k2m9x4ab:/root{}",
                    if spec.starts_with("box_") {
                        format!(" ({spec}:/root)")
                    } else {
                        String::new()
                    }
                ))
                .into()
        })
    }
}

/// `holm ls BOX:/PATH`.
#[derive(Debug, Args)]
pub struct LsArgs {
    /// `BOX:/PATH` to list a directory in a box; nothing to list the boxes.
    pub target: Option<String>,
    /// How many levels to descend (files only).
    #[arg(long, default_value_t = 1)]
    pub depth: u32,
    /// Boxes: also the boxes warm pools hold (`pooled`), never shown to agents.
    #[arg(long)]
    pub all: bool,
}

/// `holm cat BOX:/PATH...`.
#[derive(Debug, Args)]
pub struct CatArgs {
    /// The files, `BOX:/PATH` each, written to standard output in order.
    #[arg(required = true)]
    files: Vec<String>,
}

/// `holm mkdir BOX:/PATH...`.
#[derive(Debug, Args)]
pub struct MkdirArgs {
    /// The directories, `BOX:/PATH` each; missing parents are made too.
    #[arg(required = true)]
    dirs: Vec<String>,
}

/// `holm mv BOX:/FROM BOX:/TO`.
#[derive(Debug, Args)]
pub struct MvArgs {
    /// What to move, `BOX:/PATH`.
    from: String,
    /// Where to, `BOX:/PATH` in the same box.
    to: String,
    /// Replace what is already there.
    #[arg(long, short = 'f')]
    force: bool,
}

/// `holm rm BOX...` or `holm rm BOX:/PATH...`.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// Box ids to remove the boxes, or `BOX:/PATH` to remove files.
    #[arg(required = true)]
    targets: Vec<String>,
    /// Files: remove directories with what they hold.
    #[arg(long, short = 'r')]
    recursive: bool,
}

/// `holm cp`.
#[derive(Debug, Args)]
pub struct CpArgs {
    /// Where from.
    src: String,
    /// Where to.
    dst: String,
}

/// `holm ls BOX:/PATH`: a directory in a box.
pub async fn ls_files(
    client: &Client,
    target: &str,
    depth: u32,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let at = BoxPath::required(target, "holm ls")?;
    let entries = client.boxed(&at.r#box).list(&at.path, depth).await?;
    if json {
        output::json(&entries);
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            let kind = match e.kind {
                FileType::File => "file",
                FileType::Dir => "dir",
                FileType::Symlink => "link",
                FileType::Other => "other",
            };
            let name = match &e.symlink_target {
                Some(t) => format!("{} -> {t}", e.path),
                None => e.path.clone(),
            };
            vec![
                kind.to_owned(),
                e.mode.clone(),
                e.size.to_string(),
                e.modified.clone().unwrap_or_default(),
                name,
            ]
        })
        .collect();
    output::table(&["TYPE", "MODE", "SIZE", "MODIFIED", "PATH"], &rows);
    Ok(ExitCode::SUCCESS)
}

/// `holm cat`: files to standard output, as they are (bytes, not text).
pub async fn cat(client: &Client, a: CatArgs) -> anyhow::Result<ExitCode> {
    // Every name is checked before anything is written.
    let paths: Vec<BoxPath> =
        a.files.iter().map(|f| BoxPath::required(f, "holm cat")).collect::<Result<_, _>>()?;
    let mut out = std::io::stdout().lock();
    for p in paths {
        let mut stream = std::pin::pin!(client.boxed(&p.r#box).read_file_stream(&p.path).await?);
        while let Some(chunk) = stream.next().await {
            out.write_all(&chunk?).context("write standard output")?;
        }
    }
    out.flush().context("write standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// `holm mkdir`: directories and their parents.
pub async fn mkdir(client: &Client, a: MkdirArgs, json: bool) -> anyhow::Result<ExitCode> {
    let paths: Vec<BoxPath> =
        a.dirs.iter().map(|d| BoxPath::required(d, "holm mkdir")).collect::<Result<_, _>>()?;
    let mut made = Vec::new();
    for p in paths {
        made.push(client.boxed(&p.r#box).mkdir(&p.path).await?);
    }
    print_paths(&made, json);
    Ok(ExitCode::SUCCESS)
}

/// `holm mv`: a rename within one box.
pub async fn mv(client: &Client, a: MvArgs, json: bool) -> anyhow::Result<ExitCode> {
    let from = BoxPath::required(&a.from, "holm mv")?;
    let to = BoxPath::required(&a.to, "holm mv")?;
    if from.r#box != to.r#box {
        return Err(ApiError::invalid("holm mv moves within one box")
            .with_hint("copy between boxes through a local file: holm cp BOX:/PATH FILE, then holm cp FILE OTHER:/PATH")
            .into());
    }
    let info = client.boxed(&from.r#box).rename(&from.path, &to.path, a.force).await?;
    print_paths(std::slice::from_ref(&info), json);
    Ok(ExitCode::SUCCESS)
}

/// `holm rm`: boxes (`BOX`) or files (`BOX:/PATH`), not both in one call.
pub async fn rm(client: &Client, a: RmArgs, json: bool) -> anyhow::Result<ExitCode> {
    let files: Vec<Option<BoxPath>> = a.targets.iter().map(|t| BoxPath::parse(t)).collect();
    let count = files.iter().filter(|f| f.is_some()).count();
    if count == 0 {
        if a.recursive {
            bail!("-r is for files (BOX:/PATH); a box is removed whole without it");
        }
        let mut removed = Vec::new();
        for id in &a.targets {
            removed.push(client.remove_box(id).await?);
        }
        if json {
            output::json(&removed);
        } else {
            for b in removed {
                output::line(&b.id);
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if count != files.len() {
        return Err(ApiError::invalid("holm rm takes boxes or files (BOX:/PATH), not both")
            .with_hint("remove the files first, then the boxes, in two commands")
            .into());
    }
    let mut removed = Vec::new();
    for p in files.into_iter().flatten() {
        client.boxed(&p.r#box).remove(&p.path, a.recursive).await?;
        removed.push(format!("{}:{}", p.r#box, p.path));
    }
    if json {
        output::json(&removed);
    } else {
        for r in removed {
            output::line(&r);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_paths(infos: &[holm_proto::guest::FileInfo], json: bool) {
    if json {
        output::json(&infos);
    } else {
        for i in infos {
            output::line(&i.path);
        }
    }
}

/// `holm cp FILE BOX:/PATH` or `holm cp BOX:/PATH FILE` (`-` is standard
/// output).
pub async fn cp(client: &Client, a: CpArgs, json: bool) -> anyhow::Result<ExitCode> {
    let (src, dst) = (a.src.as_str(), a.dst.as_str());
    match (BoxPath::parse(src), BoxPath::parse(dst)) {
        (None, Some(to)) => {
            let file = tokio::fs::File::open(src).await.with_context(|| format!("open {src}"))?;
            let body = reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::new(file));
            let info = client.boxed(&to.r#box).write_file(&to.path, body, None).await?;
            if json {
                output::json(&info);
            }
        }
        (Some(from), None) => {
            let mut stream =
                std::pin::pin!(client.boxed(&from.r#box).read_file_stream(&from.path).await?);
            let mut out: Box<dyn Write> = if dst == "-" {
                Box::new(std::io::stdout())
            } else {
                Box::new(std::fs::File::create(dst).with_context(|| format!("create {dst}"))?)
            };
            while let Some(chunk) = stream.next().await {
                out.write_all(&chunk?).with_context(|| format!("write {dst}"))?;
            }
            out.flush()?;
        }
        (Some(_), Some(_)) => bail!(
            "copy between boxes through a local file: holm cp BOX:/PATH FILE, then holm cp FILE BOX:/PATH"
        ),
        (None, None) => {
            bail!("one side must be BOX:/absolute/path, such as box_abc:/root/notes.txt")
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use holm_proto::ApiError;

    use super::BoxPath;

    #[test]
    fn box_paths() {
        let p = |s: &str| BoxPath::parse(s).map(|b| (b.r#box, b.path));
        assert_eq!(p("box_ab12:/root/x"), Some(("box_ab12".into(), "/root/x".into())));
        // A relative path is the box's to refuse, in the one error shape.
        assert_eq!(p("box_ab12:relative"), Some(("box_ab12".into(), "relative".into())));
        assert_eq!(p("box_ab12:"), Some(("box_ab12".into(), String::new())));
        assert_eq!(p("./local:file"), None);
        assert_eq!(p("box_x/y:/z"), None);
        assert_eq!(p("/tmp/x"), None);
        assert_eq!(p("box_ab12"), None);
        let e = BoxPath::required("box_ab12", "holm ls").unwrap_err();
        let e = e.downcast_ref::<ApiError>().unwrap();
        assert!(e.hint.as_deref().unwrap().contains("(box_ab12:/root)"), "{e:?}");
    }
}
