//! The browser commands: `holm bridge`, `holm page ...` and `holm state ...`.

use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use holm_client::{BoxClient, Client, PageScreenshot};
use holm_proto::guest::{
    Button, ClickRequest, ElementState, EvaluateRequest, EvaluateResult, FillRequest,
    NavigateRequest, OpenTab, PageImageFormat, PageResult, PageScreenshotOptions, PressRequest,
    StorageState, Tab, TypeRequest, WaitRequest, WaitUntil,
};

use crate::args::SensitiveArg;
use crate::output;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// How to connect Playwright or Puppeteer to a box's Chromium (prints credentials).
    Bridge(BridgeArgs),
    /// Page tools on a box's Chromium: tabs, goto, back, forward, reload, click, type, fill, press, wait, eval, screenshot, text, html.
    Page(PageArgs),
    /// Save a box's browser login (cookies and web storage), or load one into a box.
    #[command(subcommand)]
    State(StateCmd),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Bridge(a) => bridge(c, a, json).await,
            Self::Page(a) => page(c, a, json).await,
            Self::State(cmd) => state(c, cmd, json).await,
        }
    }
}

/// `holm bridge BOX`.
#[derive(Debug, Args)]
pub struct BridgeArgs {
    /// The box id.
    r#box: String,
    /// How long the ticket URL can open a connection, in seconds (1 to 300).
    #[arg(long, default_value_t = 60)]
    ttl: u32,
    /// Give the bridge a new secret first: connections and tickets made
    /// with the old one end.
    #[arg(long)]
    rotate: bool,
}

/// `holm page BOX [--tab ID] COMMAND`.
#[derive(Debug, Args)]
pub struct PageArgs {
    /// The box id.
    r#box: String,
    /// The tab (default: the current tab: the last one opened, activated or used).
    #[arg(long, global = true)]
    tab: Option<String>,
    #[command(subcommand)]
    command: PageCmd,
}

#[derive(Debug, Subcommand)]
enum PageCmd {
    /// List the tabs.
    Tabs,
    /// Open a tab (it becomes current) and load a URL in it.
    Open {
        /// The address (default about:blank).
        url: Option<String>,
    },
    /// Close a tab.
    Close {
        /// The tab id.
        id: String,
    },
    /// Bring a tab to the front and make it current.
    Activate {
        /// The tab id.
        id: String,
    },
    /// Load a URL and wait for it.
    Goto {
        /// The address.
        url: String,
        /// How far loading must get.
        #[arg(long, value_enum, default_value_t = WaitArg::Load)]
        wait: WaitArg,
        /// The longest wait, in seconds.
        #[arg(long)]
        timeout: Option<u64>,
    },
    /// Go back one page in the tab's history and wait for it to load.
    Back,
    /// Go forward one page in the tab's history and wait for it to load.
    Forward,
    /// Load the tab's page again and wait for it.
    Reload,
    /// Click the first visible element that matches a CSS selector.
    Click {
        /// The CSS selector.
        selector: String,
        /// 2 for a double click.
        #[arg(long)]
        count: Option<u8>,
        /// Use the right button.
        #[arg(long)]
        right: bool,
        /// Wait this many seconds for the element.
        #[arg(long)]
        timeout: Option<u64>,
    },
    /// Type text as key presses into the element that matches (`\n` is Enter).
    Type {
        /// The CSS selector.
        selector: String,
        /// The text.
        text: String,
        #[command(flatten)]
        secret: SensitiveArg,
    },
    /// Set a field's value at once.
    Fill {
        /// The CSS selector.
        selector: String,
        /// The value.
        value: String,
        #[command(flatten)]
        secret: SensitiveArg,
    },
    /// Press a key or chord, such as Enter or Control+a.
    Press {
        /// The key.
        key: String,
        /// Focus the element that matches first.
        #[arg(long)]
        selector: Option<String>,
    },
    /// Wait until an element is in a state (a timeout is an error).
    Wait {
        /// The CSS selector.
        selector: String,
        /// The state to wait for.
        #[arg(long, value_enum, default_value_t = StateArg::Visible)]
        state: StateArg,
        /// The longest wait, in seconds.
        #[arg(long)]
        timeout: Option<u64>,
    },
    /// Evaluate a JavaScript expression and print its value as JSON.
    Eval {
        /// The expression.
        expression: String,
    },
    /// Save a screenshot of the tab (FILE `-` writes to standard output).
    Screenshot {
        /// Where to write the image.
        file: String,
        /// The whole page, not only the window.
        #[arg(long)]
        full_page: bool,
        /// JPEG instead of PNG (default: from the file's extension).
        #[arg(long)]
        jpeg: bool,
        /// JPEG quality, 1 to 100.
        #[arg(long)]
        quality: Option<u8>,
    },
    /// Print the text a person sees.
    Text,
    /// Print the HTML.
    Html,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum WaitArg {
    Load,
    DomContentLoaded,
    Commit,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum StateArg {
    Visible,
    Attached,
    Hidden,
    Detached,
}

/// `holm state save|load`.
#[derive(Debug, Subcommand)]
pub enum StateCmd {
    /// Save the box's cookies and web storage to FILE (`-`: standard output).
    Save {
        /// The box id.
        r#box: String,
        /// Where to write the JSON document.
        file: String,
    },
    /// Load cookies and web storage from FILE (`-`: standard input) into the box.
    Load {
        /// The box id.
        r#box: String,
        /// The JSON document from `holm state save`.
        file: String,
    },
}

fn ms(secs: Option<u64>) -> Option<u64> {
    secs.map(|s| s.saturating_mul(1000))
}

fn print_page(r: &PageResult, json: bool) {
    if json {
        output::json(r);
    } else {
        output::line(&format!("{}\t{}", r.title, r.url));
    }
}

/// `holm bridge BOX`: prints how to connect, with credentials.
pub async fn bridge(client: &Client, a: BridgeArgs, json: bool) -> anyhow::Result<ExitCode> {
    let b = client.boxed(&a.r#box);
    let access =
        if a.rotate { b.rotate_bridge(Some(a.ttl)).await? } else { b.bridge(Some(a.ttl)).await? };
    if json {
        output::json(&access);
    } else {
        output::line(&format!("http_url      {}", access.http_url));
        output::line(&format!("ws_url        {}", access.ws_url));
        for (k, v) in &access.headers {
            output::line(&format!("header        {k}: {v}"));
        }
        output::line(&format!("ticket_url    {}", access.ticket_url));
        output::line(&format!("ticket_ws_url {}", access.ticket_ws_url));
        output::line(&format!("expires_at    {}", access.expires_at));
    }
    Ok(ExitCode::SUCCESS)
}

impl From<WaitArg> for WaitUntil {
    fn from(w: WaitArg) -> Self {
        match w {
            WaitArg::Load => Self::Load,
            WaitArg::DomContentLoaded => Self::DomContentLoaded,
            WaitArg::Commit => Self::Commit,
        }
    }
}

impl From<StateArg> for ElementState {
    fn from(s: StateArg) -> Self {
        match s {
            StateArg::Visible => Self::Visible,
            StateArg::Attached => Self::Attached,
            StateArg::Hidden => Self::Hidden,
            StateArg::Detached => Self::Detached,
        }
    }
}

/// `holm page tabs`: a table, or the tabs as JSON.
fn print_tabs(tabs: &[Tab], json: bool) {
    if json {
        output::json(&tabs);
        return;
    }
    let rows: Vec<Vec<String>> = tabs
        .iter()
        .map(|t| {
            vec![
                t.id.clone(),
                if t.current { "*" } else { "" }.to_owned(),
                t.title.clone(),
                t.url.clone(),
            ]
        })
        .collect();
    output::table(&["TAB", "CURRENT", "TITLE", "URL"], &rows);
}

/// `holm page eval`: the value as JSON (or what JSON cannot hold).
fn print_eval(r: &EvaluateResult, json: bool) -> anyhow::Result<()> {
    if json {
        output::json(r);
    } else if let Some(u) = &r.unserializable {
        output::line(u);
    } else {
        output::line(&serde_json::to_string(&r.value)?);
    }
    Ok(())
}

/// `holm page screenshot`: the image to FILE (`-`: standard output).
fn save_screenshot(shot: &PageScreenshot, file: &str, json: bool) -> anyhow::Result<()> {
    if file == "-" {
        std::io::stdout().write_all(&shot.bytes).context("write standard output")?;
    } else {
        std::fs::write(file, &shot.bytes).with_context(|| format!("write {file}"))?;
        if json {
            output::json(&serde_json::json!({
                "file": file, "width": shot.width, "height": shot.height,
            }));
        }
    }
    Ok(())
}

/// `holm page ...`.
pub async fn page(client: &Client, a: PageArgs, json: bool) -> anyhow::Result<ExitCode> {
    let b: BoxClient = client.boxed(&a.r#box);
    let tab = a.tab;
    match a.command {
        PageCmd::Tabs => print_tabs(&b.tabs().await?, json),
        PageCmd::Open { url } => {
            let t = b.open_tab(&OpenTab { url, ..OpenTab::default() }).await?;
            if json {
                output::json(&t);
            } else {
                output::line(&t.id);
            }
        }
        PageCmd::Close { id } => b.close_tab(&id).await?,
        PageCmd::Activate { id } => b.activate_tab(&id).await?,
        PageCmd::Eval { expression } => {
            let r = b
                .evaluate_with(&EvaluateRequest { expression, tab, ..EvaluateRequest::default() })
                .await?;
            print_eval(&r, json)?;
        }
        PageCmd::Screenshot { file, full_page, jpeg, quality } => {
            let jpeg =
                jpeg || [".jpg", ".jpeg"].iter().any(|e| file.to_ascii_lowercase().ends_with(e));
            let options = PageScreenshotOptions {
                tab,
                format: Some(if jpeg { PageImageFormat::Jpeg } else { PageImageFormat::Png }),
                quality,
                full_page: full_page.then_some(true),
            };
            save_screenshot(&b.page_screenshot(&options).await?, &file, json)?;
        }
        PageCmd::Text | PageCmd::Html => {
            let html = matches!(a.command, PageCmd::Html);
            let c = if html {
                b.page_html(tab.as_deref()).await?
            } else {
                b.page_text(tab.as_deref()).await?
            };
            if json {
                output::json(&c);
            } else {
                output::line(&c.content);
            }
        }
        action => print_page(&act(&b, tab, action).await?, json),
    }
    Ok(ExitCode::SUCCESS)
}

/// The page commands that act on an element or the page and answer a
/// [`PageResult`]: goto, back, forward, reload, click, type, fill, press
/// and wait.
async fn act(b: &BoxClient, tab: Option<String>, cmd: PageCmd) -> anyhow::Result<PageResult> {
    Ok(match cmd {
        PageCmd::Goto { url, wait, timeout } => {
            let wait_until = Some(wait.into());
            b.navigate_with(&NavigateRequest { url, tab, wait_until, timeout_ms: ms(timeout) })
                .await?
        }
        PageCmd::Back => b.page_back(tab.as_deref()).await?,
        PageCmd::Forward => b.page_forward(tab.as_deref()).await?,
        PageCmd::Reload => b.page_reload(tab.as_deref()).await?,
        PageCmd::Click { selector, count, right, timeout } => {
            b.page_click_with(&ClickRequest {
                selector,
                tab,
                button: right.then_some(Button::Right),
                count,
                timeout_ms: ms(timeout),
            })
            .await?
        }
        PageCmd::Type { selector, text, secret } => {
            b.page_type_with(&TypeRequest {
                text,
                selector: Some(selector),
                tab,
                timeout_ms: None,
                sensitive: secret.sensitive,
            })
            .await?
        }
        PageCmd::Fill { selector, value, secret } => {
            let sensitive = secret.sensitive;
            b.page_fill_with(&FillRequest { selector, value, tab, timeout_ms: None, sensitive })
                .await?
        }
        PageCmd::Press { key, selector } => {
            b.page_press_with(&PressRequest { key, selector, tab, timeout_ms: None }).await?
        }
        PageCmd::Wait { selector, state, timeout } => {
            let state = Some(state.into());
            b.page_wait_with(&WaitRequest { selector, state, tab, timeout_ms: ms(timeout) }).await?
        }
        other => unreachable!("`holm page` answers {other:?} itself"),
    })
}

/// `holm state save|load`.
pub async fn state(client: &Client, cmd: StateCmd, json: bool) -> anyhow::Result<ExitCode> {
    match cmd {
        StateCmd::Save { r#box, file } => {
            let state = client.boxed(&r#box).save_state().await?;
            let text = serde_json::to_string_pretty(&state)?;
            if file == "-" {
                output::line(&text);
            } else {
                write_private(&file, text.as_bytes())?;
                if json {
                    output::json(&serde_json::json!({
                        "file": file, "cookies": state.cookies.len(), "origins": state.origins.len(),
                    }));
                }
            }
        }
        StateCmd::Load { r#box, file } => {
            let mut text = String::new();
            if file == "-" {
                std::io::stdin().read_to_string(&mut text).context("read standard input")?;
            } else {
                text = std::fs::read_to_string(&file).with_context(|| format!("read {file}"))?;
            }
            let state: StorageState = serde_json::from_str(&text).with_context(|| {
                format!("{file} is not a state document from `holm state save`")
            })?;
            let r = client.boxed(&r#box).load_state(&state).await?;
            if json {
                output::json(&r);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a file only its owner can read: a state document holds logins.
fn write_private(path: &str, bytes: &[u8]) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("create {path}"))?;
    f.write_all(bytes).with_context(|| format!("write {path}"))?;
    Ok(())
}
