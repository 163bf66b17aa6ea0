//! Credentials out of the command lines and URLs a timeline keeps.
//!
//! A command line (or argv) keeps its shape, with the value of every
//! usual credential shape replaced by `<redacted>`:
//!
//! - `NAME=value` where the name looks like a credential (an environment
//!   assignment `PGPASSWORD=…`, an option `--password=…`, a query
//!   parameter `?access_token=…`);
//! - the word after an option named like one (`--password X`,
//!   `--token X`, `-passin X`);
//! - `-pXXX` on a line that runs a MySQL or MariaDB client;
//! - `user:<redacted>` after `-u`/`--user` (curl) and in a URL's
//!   `scheme://user:password@host`;
//! - the value of a credential header (`Authorization: …`, `Cookie: …`,
//!   `X-Api-Key: …`), to its closing quote.
//!
//! This is a best effort over the usual shapes, not a guarantee: a
//! credential in a shape it does not know stays (the `sensitive` flag is
//! the way to keep nothing; docs/security.md says so).

/// What replaces a value.
pub const REDACTED: &str = "<redacted>";

/// Parts of names whose values are credentials (lowercase, `-` as `_`).
const SECRET_PARTS: &[&str] = &[
    "secret",
    "token",
    "password",
    "passwd",
    "passphrase",
    "authorization",
    "cookie",
    "credential",
    "api_key",
    "apikey",
    "access_key",
    "private_key",
];

/// Headers whose values are credentials.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
    "x-auth-token",
    "private-token",
];

/// Whether a name (of a variable, an option, a field, a query parameter)
/// is a credential's.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.trim_start_matches('-').to_ascii_lowercase().replace('-', "_");
    n == "auth"
        || n.starts_with("pass") && !n.starts_with("passthrough")
        || n.ends_with("_pass")
        || n.ends_with("_auth")
        || SECRET_PARTS.iter().any(|s| n.contains(s))
}

/// A URL without its query, fragment and credentials; text that is not a
/// URL is kept.
pub fn url(s: &str) -> String {
    match url::Url::parse(s) {
        Ok(mut u) if u.has_host() || u.scheme() == "file" => {
            u.set_query(None);
            u.set_fragment(None);
            let _ = u.set_password(None);
            let _ = u.set_username("");
            u.to_string()
        }
        _ => s.to_owned(),
    }
}

/// A shell command line with credentials' values replaced.
pub fn command_line(line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mysql = words.iter().any(|w| runs_mysql(w));
    let mut out = String::with_capacity(line.len());
    let mut state = State::Plain;
    let mut rest = line;
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (word, after) = rest.split_at(end);
        rest = after;
        let (w, next) = step(word, state, mysql, true);
        out.push_str(&w);
        state = next;
    }
    out.push_str(rest);
    out
}

/// An argv with credentials' values replaced.
pub fn argv(args: &[String]) -> Vec<String> {
    let mysql = args.iter().any(|w| runs_mysql(w));
    let mut state = State::Plain;
    args.iter()
        .map(|a| {
            let (w, next) = step(a, state, mysql, false);
            state = next;
            w
        })
        .collect()
}

/// What the words before say of the next one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Plain,
    /// After an option named like a credential: the next word is one.
    Value,
    /// After `-u`/`--user`: the next word may be `user:password`.
    User,
    /// Inside a credential header's value, up to this closing quote (or
    /// the next word when there is none).
    Header(Option<char>),
}

fn runs_mysql(word: &str) -> bool {
    let base = word.trim_matches(['\'', '"']).rsplit('/').next().unwrap_or("");
    base.starts_with("mysql") || base.starts_with("mariadb")
}

/// One word, redacted, and what it says of the next. `split` tells that
/// the words come from splitting a line at spaces (so a header's value may
/// run on over several) rather than from an argv.
fn step(word: &str, state: State, mysql: bool, split: bool) -> (String, State) {
    match state {
        State::Header(quote) => {
            let closed = quote.is_none_or(|q| word.ends_with(q));
            let tail =
                if closed { quote.map(String::from).unwrap_or_default() } else { String::new() };
            return (format!("{REDACTED}{tail}"), if closed { State::Plain } else { state });
        }
        State::Value if !word.starts_with('-') => return (REDACTED.to_owned(), State::Plain),
        State::User => {
            if let Some((user, _)) = word.split_once(':') {
                return (format!("{user}:{REDACTED}"), State::Plain);
            }
        }
        _ => {}
    }
    let bare = word.trim_start_matches(['\'', '"']);
    // A credential header: `Authorization: …`.
    if let Some((name, value)) = bare.split_once(':')
        && SECRET_HEADERS.contains(&name.to_ascii_lowercase().as_str())
    {
        let lead = &word[..word.len() - bare.len()];
        let quote = lead.chars().next();
        if !value.trim().is_empty() || !split {
            let closed = quote.is_none_or(|q| value.ends_with(q));
            let tail =
                if closed { quote.map(String::from).unwrap_or_default() } else { String::new() };
            let next = if closed || !split { State::Plain } else { State::Header(quote) };
            return (format!("{lead}{name}: {REDACTED}{tail}"), next);
        }
        return (word.to_owned(), State::Header(quote));
    }
    if mysql && word.len() > 2 && word.starts_with("-p") && !word.starts_with("-p=") {
        let value = &word[2..];
        let quote = value.chars().next().filter(|c| *c == '\'' || *c == '"');
        let open = quote.filter(|q| split && !(value.len() > 1 && value.ends_with(*q)));
        let next = open.map_or(State::Plain, |q| State::Header(Some(q)));
        return (format!("-p{REDACTED}"), next);
    }
    let (w, open) = assignments(&userinfo(word));
    let next = match open {
        Some(q) if split => State::Header(Some(q)),
        _ if w == word && is_secret_option(word) => State::Value,
        _ if word == "-u" || word == "--user" => State::User,
        _ => State::Plain,
    };
    (w, next)
}

/// Whether a word is an option named like a credential, without a value.
fn is_secret_option(word: &str) -> bool {
    word.starts_with('-') && !word.contains('=') && is_secret_name(word)
}

/// `NAME=value` (also inside a word: `?a=1&token=x`) with the value of a
/// credential's name replaced, up to `&`, `;`, a quote or the end; a
/// quoted value to its closing quote, which is answered when the word
/// does not hold it.
fn assignments(word: &str) -> (String, Option<char>) {
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(eq) = rest.find('=') {
        let (before, after) = rest.split_at(eq);
        let after = &after[1..];
        let name_start = before
            .char_indices()
            .rfind(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-' || *c == '.'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        out.push_str(before);
        out.push('=');
        if after.is_empty() || !is_secret_name(&before[name_start..]) {
            rest = after;
            continue;
        }
        if let Some(q) = after.chars().next().filter(|c| *c == '\'' || *c == '"') {
            out.push(q);
            out.push_str(REDACTED);
            match after[1..].find(q) {
                Some(close) => rest = &after[1 + close..],
                None => return (out, Some(q)),
            }
        } else {
            out.push_str(REDACTED);
            rest = &after[after.find(['&', ';', '\'', '"']).unwrap_or(after.len())..];
        }
    }
    out.push_str(rest);
    (out, None)
}

/// `scheme://user:password@host` with the password replaced.
fn userinfo(word: &str) -> String {
    let Some(at) = word.find("://") else { return word.to_owned() };
    let auth_start = at + 3;
    let tail = &word[auth_start..];
    let auth_end = tail.find(['/', '?', '#', '\'', '"']).unwrap_or(tail.len());
    let Some(at_sign) = tail[..auth_end].rfind('@') else { return word.to_owned() };
    let Some(colon) = tail[..at_sign].find(':') else { return word.to_owned() };
    format!("{}{}:{REDACTED}{}", &word[..auth_start], &tail[..colon], &tail[at_sign..])
}

#[cfg(test)]
mod tests {
    /// Words with characters of every UTF-8 length beside each delimiter
    /// the redaction cuts at (schemathesis found `\u{80}=0` cut inside a
    /// character, which ended the request's connection): none panics.
    #[test]
    fn multibyte_characters_beside_every_delimiter_are_cut_whole() {
        let chars = ["\u{80}", "é", "€", "😀", "a"];
        let delims = ["=", ":", "@", "://", "&", ";", "'", "\"", "-p", "?", "#", "/"];
        for a in chars {
            for d in delims {
                for b in chars {
                    for line in [
                        format!("{a}{d}{b}"),
                        format!("{a}{d}"),
                        format!("{d}{b}"),
                        format!("mysql {a}{d}{b} --password {b}"),
                    ] {
                        let _ = super::command_line(&line);
                        let _ = super::command_line(&format!("TOKEN{a}={b} x://{a}:{b}@{d}"));
                    }
                }
            }
        }
        assert_eq!(super::command_line("\u{80}=0"), "\u{80}=0");
        assert_eq!(super::command_line("é_TOKEN=s3cret"), format!("é_TOKEN={}", super::REDACTED));
    }

    use super::*;

    #[test]
    fn command_lines_keep_their_shape_and_lose_credentials() {
        for (line, want) in [
            ("true mysql -uroot -pS3CRET", "true mysql -uroot -p<redacted>"),
            ("mysqldump -h db -p'pw x' app", "mysqldump -h db -p<redacted> <redacted>' app"),
            ("mysql -p'pw' app", "mysql -p<redacted> app"),
            ("ssh -p2222 host", "ssh -p2222 host"),
            ("mysql -p app", "mysql -p app"),
            ("psql --password=hunter2 db", "psql --password=<redacted> db"),
            ("tool --password hunter2 --verbose", "tool --password <redacted> --verbose"),
            ("gh auth login --with-token  tkn123", "gh auth login --with-token  <redacted>"),
            ("openssl enc -passin pass:xyz", "openssl enc -passin <redacted>"),
            ("PGPASSWORD=pw psql", "PGPASSWORD=<redacted> psql"),
            ("export GITHUB_TOKEN=ghp_abc; make", "export GITHUB_TOKEN=<redacted>; make"),
            (
                "env AWS_SECRET_ACCESS_KEY='a b' x",
                "env AWS_SECRET_ACCESS_KEY='<redacted> <redacted>' x",
            ),
            ("MY_API_KEY=\"k\" run", "MY_API_KEY=\"<redacted>\" run"),
            (
                "curl -H 'Authorization: Bearer abc.def' https://api.test/x",
                "curl -H 'Authorization: <redacted> <redacted>' https://api.test/x",
            ),
            (
                "curl -H \"Cookie: sid=abc; other=1\" -d x https://a.test",
                "curl -H \"Cookie: <redacted> <redacted>\" -d x https://a.test",
            ),
            ("curl -H Authorization:Bearer x", "curl -H Authorization: <redacted> x"),
            ("curl -u admin:pw https://a.test", "curl -u admin:<redacted> https://a.test"),
            (
                "git clone https://bob:ghp_s3cret@github.com/o/r.git",
                "git clone https://bob:<redacted>@github.com/o/r.git",
            ),
            ("psql postgres://u:PASSWORD@db:5432/app", "psql postgres://u:<redacted>@db:5432/app"),
            (
                "curl 'https://a.test/cb?code=1&access_token=xyz&state=2'",
                "curl 'https://a.test/cb?code=1&access_token=<redacted>&state=2'",
            ),
            ("echo ok", "echo ok"),
            ("ls -la /tmp && echo  done\n", "ls -la /tmp && echo  done\n"),
            ("PWD=/tmp PATH=/bin ls", "PWD=/tmp PATH=/bin ls"),
        ] {
            assert_eq!(command_line(line), want, "{line}");
        }
    }

    #[test]
    fn argvs_lose_credentials_element_by_element() {
        let v = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        for (args, want) in [
            (v(&["mysql", "-uroot", "-pS3CRET"]), v(&["mysql", "-uroot", "-p<redacted>"])),
            (v(&["tool", "--token", "t0k", "x"]), v(&["tool", "--token", "<redacted>", "x"])),
            (
                v(&["curl", "-H", "Authorization: Bearer a b", "u"]),
                v(&["curl", "-H", "Authorization: <redacted>", "u"]),
            ),
            (v(&["curl", "--user", "me:pw"]), v(&["curl", "--user", "me:<redacted>"])),
            (v(&["env", "DB_PASSWORD=x y", "run"]), v(&["env", "DB_PASSWORD=<redacted>", "run"])),
            (v(&["echo", "hello", "world"]), v(&["echo", "hello", "world"])),
        ] {
            assert_eq!(argv(&args), want, "{args:?}");
        }
    }

    #[test]
    fn urls_lose_query_fragment_and_credentials() {
        assert_eq!(url("https://a.test/cb?code=x#tok=y"), "https://a.test/cb");
        assert_eq!(url("https://u:p@a.test/x"), "https://a.test/x");
        assert_eq!(url("about:blank"), "about:blank");
        assert_eq!(url("not a url"), "not a url");
    }

    #[test]
    fn secret_names() {
        for n in
            ["password", "--password", "DB_PASS", "-passin", "X-Api-Key", "GITHUB_TOKEN", "auth"]
        {
            assert!(is_secret_name(n), "{n}");
        }
        for n in ["PATH", "PWD", "--author", "user", "--verbose", "path"] {
            assert!(!is_secret_name(n), "{n}");
        }
    }
}
