//! A browser's state saved and loaded: cookies and each origin's web storage.

use super::*;

/// Reads the web storage of the page's origin.
pub(super) const READ_STORAGE: &str = r#"(() => {
  const read = (area) => {
    const out = [];
    try {
      const s = window[area];
      for (let i = 0; i < s.length; i++) { const k = s.key(i); out.push({ name: k, value: s.getItem(k) }); }
    } catch (e) {}
    return out;
  };
  return { origin: location.origin, local_storage: read('localStorage'), session_storage: read('sessionStorage') };
})()"#;

impl Browser {
    /// The cookies, and the web storage of every http(s) origin open in a tab.
    pub async fn save_state(&self) -> Result<StorageState, ApiError> {
        let b = self.browser().await?;
        let r = b.call("Storage.getCookies", json!({})).await.map_err(cdp_error)?;
        let cookies = r["cookies"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(cookie_from_cdp)
            .collect();
        let mut origins: Vec<OriginState> = Vec::new();
        for tab in self.tabs().await? {
            if !(tab.url.starts_with("http://") || tab.url.starts_with("https://")) {
                continue;
            }
            let page = self.page(&tab.id).await?;
            let v = match evaluate_value(&page, READ_STORAGE, 10_000).await {
                Ok(v) => v,
                // A tab that navigates away meanwhile is skipped, not fatal.
                Err(e) => {
                    tracing::info!(tab = %tab.id, error = %e, "cannot read a tab's storage");
                    continue;
                }
            };
            let Ok(state) = serde_json::from_value::<OriginState>(v) else { continue };
            match origins.iter_mut().find(|o| o.origin == state.origin) {
                Some(o) => {
                    merge(&mut o.local_storage, state.local_storage);
                    merge(&mut o.session_storage, state.session_storage);
                }
                None => origins.push(state),
            }
        }
        origins.retain(|o| !(o.local_storage.is_empty() && o.session_storage.is_empty()));
        Ok(StorageState { cookies, origins })
    }

    /// Sets cookies, and the web storage of each origin: each origin is opened
    /// in a background tab whose document is answered by DevTools (an empty
    /// page; nothing is fetched), its storage set, and the tab closed, unless
    /// it holds session storage, which lives only in its tab.
    pub async fn load_state(&self, state: &StorageState) -> Result<LoadStateResult, ApiError> {
        let mut issues = Vec::new();
        for (i, o) in state.origins.iter().enumerate() {
            if origin_of(&o.origin).is_none() {
                issues.push(Issue {
                    path: format!("origins[{i}].origin"),
                    problem: format!("{:?} is not an http or https origin", o.origin),
                });
            }
        }
        if !issues.is_empty() {
            return Err(ApiError::invalid_fields(issues));
        }
        let b = self.browser().await?;
        if !state.cookies.is_empty() {
            let cookies: Vec<Value> = state.cookies.iter().map(cookie_to_cdp).collect();
            b.call("Storage.setCookies", json!({"cookies": cookies})).await.map_err(cdp_error)?;
        }
        let mut done = 0;
        let mut tabs_opened = Vec::new();
        for o in &state.origins {
            if o.local_storage.is_empty() && o.session_storage.is_empty() {
                continue;
            }
            let origin = origin_of(&o.origin).unwrap_or_default();
            let id = self.create_blank(true).await?;
            let result = async {
                let page = self.page(&id).await?;
                page.call(
                    "Fetch.enable",
                    json!({"patterns": [{"urlPattern": format!("{origin}/*"), "resourceType": "Document", "requestStage": "Request"}]}),
                )
                .await
                .map_err(cdp_error)?;
                navigate(&page, &format!("{origin}/"), WaitUntil::Load, NAV_TIMEOUT_MS, true).await?;
                page.call("Fetch.disable", json!({})).await.map_err(cdp_error)?;
                let expression = format!(
                    "((local, session) => {{ for (const i of local) localStorage.setItem(i.name, i.value); for (const i of session) sessionStorage.setItem(i.name, i.value); return location.origin; }})({}, {})",
                    js(&o.local_storage),
                    js(&o.session_storage)
                );
                let got = evaluate_value(&page, &expression, 10_000).await?;
                if got.as_str() != Some(origin.as_str()) {
                    return Err(ApiError::new(
                        ErrorCode::PageError,
                        format!("could not open {origin} to set its storage"),
                    ));
                }
                Ok::<(), ApiError>(())
            }
            .await;
            if result.is_err() || o.session_storage.is_empty() {
                let _ = self.close(&id).await;
            } else {
                tabs_opened.push(id);
            }
            result?;
            done += 1;
        }
        Ok(LoadStateResult { cookies: state.cookies.len(), origins: done, tabs_opened })
    }
}

/// `scheme://host[:port]` of an http(s) origin, without a trailing slash.
pub(super) fn origin_of(s: &str) -> Option<String> {
    let rest = s.strip_prefix("http://").or_else(|| s.strip_prefix("https://"))?;
    let host = rest.trim_end_matches('/');
    if host.is_empty() || host.contains(['/', '?', '#', ' ', '*']) {
        return None;
    }
    Some(s.trim_end_matches('/').to_owned())
}

pub(super) fn merge(into: &mut Vec<StorageItem>, from: Vec<StorageItem>) {
    for item in from {
        if !into.iter().any(|i| i.name == item.name) {
            into.push(item);
        }
    }
}

pub(super) fn cookie_from_cdp(c: &Value) -> Option<Cookie> {
    Some(Cookie {
        name: c["name"].as_str()?.to_owned(),
        value: c["value"].as_str()?.to_owned(),
        domain: c["domain"].as_str()?.to_owned(),
        path: c["path"].as_str().unwrap_or("/").to_owned(),
        expires: if c["session"] == true { -1.0 } else { c["expires"].as_f64().unwrap_or(-1.0) },
        http_only: c["httpOnly"] == true,
        secure: c["secure"] == true,
        same_site: match c["sameSite"].as_str() {
            Some("Strict") => Some(SameSite::Strict),
            Some("Lax") => Some(SameSite::Lax),
            Some("None") => Some(SameSite::None),
            _ => None,
        },
    })
}

pub(super) fn cookie_to_cdp(c: &Cookie) -> Value {
    let mut v = json!({
        "name": c.name, "value": c.value, "domain": c.domain, "path": c.path,
        "secure": c.secure, "httpOnly": c.http_only,
    });
    if c.expires >= 0.0 {
        v["expires"] = json!(c.expires);
    }
    if let Some(s) = c.same_site {
        v["sameSite"] = json!(match s {
            SameSite::Strict => "Strict",
            SameSite::Lax => "Lax",
            SameSite::None => "None",
        });
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_checked() {
        assert_eq!(origin_of("http://127.0.0.1:8000").as_deref(), Some("http://127.0.0.1:8000"));
        assert_eq!(origin_of("https://a.example/").as_deref(), Some("https://a.example"));
        assert!(origin_of("file:///etc").is_none());
        assert!(origin_of("http://a/b").is_none());
        assert!(origin_of("http://").is_none());
    }

    #[test]
    fn cookies_round_trip_through_cdp_shapes() {
        let cdp = json!({"name": "sid", "value": "1", "domain": "127.0.0.1", "path": "/",
            "expires": 1_900_000_000.5, "size": 4, "httpOnly": true, "secure": false,
            "session": false, "sameSite": "Lax", "priority": "Medium", "sourceScheme": "NonSecure"});
        let c = cookie_from_cdp(&cdp).unwrap();
        assert_eq!(c.same_site, Some(SameSite::Lax));
        assert!(c.http_only);
        let back = cookie_to_cdp(&c);
        assert_eq!(back["expires"], 1_900_000_000.5);
        assert_eq!(back["sameSite"], "Lax");
        let session =
            cookie_from_cdp(&json!({"name": "s", "value": "", "domain": "d", "path": "/",
            "expires": -1, "session": true}))
            .unwrap();
        assert_eq!(session.expires, -1.0);
        assert!(cookie_to_cdp(&session).get("expires").is_none());
    }
}
