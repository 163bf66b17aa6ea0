//! Viewer tokens: each names one box, one screen, one mode and an expiry,
//! and is signed with the box's viewer key (HMAC-SHA256), so the guest
//! checks it without a table and a token is worth nothing on another box.
//!
//! A token is `GRANT.SCREEN.MODE.EXPIRES.MAC`: the grant id (`vg_` and 12 hex
//! digits, what a revocation names), the screen, `v` (view) or `c`
//! (control), the expiry in seconds since the epoch, and the first 16 bytes
//! of the HMAC of all that and the box id, in hex. A new key (each new
//! desktop) makes every earlier token worthless.

use holm_proto::viewer::ViewerMode;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// What a token allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    /// The grant's id.
    pub grant: String,
    /// The screen.
    pub screen: u8,
    /// View or control.
    pub mode: ViewerMode,
    /// Seconds since the epoch after which it opens nothing.
    pub expires: u64,
}

/// Why a token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenError {
    /// Not a token at all.
    Malformed,
    /// Signed with another key: another box, or an earlier desktop.
    Signature,
    /// Past its expiry.
    Expired,
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Malformed => "the viewer token is malformed",
            Self::Signature => {
                "the viewer token is not this box's, or the box has a new desktop since it was made"
            }
            Self::Expired => "the viewer token has expired",
        })
    }
}

/// The length of a viewer key, in hex digits.
pub const KEY_LEN: usize = 64;

/// A new viewer key: 256 random bits in hex.
pub fn new_key() -> String {
    hex_random(32)
}

/// A new grant id, such as `vg_3f9c0a1b2c4d`.
pub fn new_grant_id() -> String {
    format!("vg_{}", hex_random(6))
}

/// Whether `key` is a viewer key (64 hex digits).
pub fn is_key(key: &str) -> bool {
    key.len() == KEY_LEN && key.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether `id` is a grant id.
pub fn is_grant_id(id: &str) -> bool {
    id.strip_prefix("vg_")
        .is_some_and(|h| (1..=32).contains(&h.len()) && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn hex_random(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    crate::random_bytes(&mut bytes);
    hex(&bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn mode_letter(mode: ViewerMode) -> &'static str {
    match mode {
        ViewerMode::View => "v",
        ViewerMode::Control => "c",
    }
}

/// HMAC-SHA256 (RFC 2104).
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

fn mac(key: &str, box_id: &str, body: &str) -> String {
    let message = format!("holm-viewer/1\n{box_id}\n{body}");
    hex(&hmac_sha256(key.as_bytes(), message.as_bytes())[..16])
}

/// The token for `claims` on box `box_id`, signed with `key`.
pub fn mint(key: &str, box_id: &str, claims: &Claims) -> String {
    let body = format!(
        "{}.{}.{}.{}",
        claims.grant,
        claims.screen,
        mode_letter(claims.mode),
        claims.expires
    );
    let mac = mac(key, box_id, &body);
    format!("{body}.{mac}")
}

/// Reads a token's claims without checking it: only to name its grant.
pub fn peek(token: &str) -> Result<Claims, TokenError> {
    let mut parts = token.split('.');
    let (Some(grant), Some(screen), Some(mode), Some(expires), Some(mac), None) =
        (parts.next(), parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed);
    };
    if !is_grant_id(grant) || mac.len() != 32 || !mac.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(TokenError::Malformed);
    }
    let screen: u8 = screen.parse().map_err(|_| TokenError::Malformed)?;
    let mode = match mode {
        "v" => ViewerMode::View,
        "c" => ViewerMode::Control,
        _ => return Err(TokenError::Malformed),
    };
    let expires: u64 = expires.parse().map_err(|_| TokenError::Malformed)?;
    Ok(Claims { grant: grant.to_owned(), screen, mode, expires })
}

/// Checks `token` against box `box_id`'s `key` at `now` (seconds since the
/// epoch), in constant time for the signature.
pub fn verify(key: &str, box_id: &str, token: &str, now: u64) -> Result<Claims, TokenError> {
    let claims = peek(token)?;
    let (body, given) = token.rsplit_once('.').ok_or(TokenError::Malformed)?;
    let expected = mac(key, box_id, body);
    if !bool::from(expected.as_bytes().ct_eq(given.to_ascii_lowercase().as_bytes())) {
        return Err(TokenError::Signature);
    }
    if now >= claims.expires {
        return Err(TokenError::Expired);
    }
    Ok(claims)
}

/// Seconds since the epoch, now.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(hex(&mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        // Test case 6: a key longer than the block.
        let mac =
            hmac_sha256(&[0xaa; 131], b"Test Using Larger Than Block-Size Key - Hash Key First");
        assert_eq!(hex(&mac), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    }

    #[test]
    fn a_token_opens_only_its_box_screen_and_time() {
        let key = new_key();
        assert!(is_key(&key));
        let claims =
            Claims { grant: new_grant_id(), screen: 1, mode: ViewerMode::Control, expires: 1000 };
        let token = mint(&key, "box_a", &claims);
        assert_eq!(verify(&key, "box_a", &token, 999), Ok(claims.clone()));
        assert_eq!(peek(&token), Ok(claims.clone()));
        assert_eq!(verify(&key, "box_a", &token, 1000), Err(TokenError::Expired));
        assert_eq!(verify(&key, "box_b", &token, 10), Err(TokenError::Signature));
        assert_eq!(verify(&new_key(), "box_a", &token, 10), Err(TokenError::Signature));
        // No claim can be changed without the key.
        for forged in [
            token.replacen(".1.c.", ".0.c.", 1),
            token.replacen(".c.", ".v.", 1),
            token.replacen(".1000.", ".9999.", 1),
        ] {
            assert_ne!(forged, token);
            assert_eq!(verify(&key, "box_a", &forged, 10), Err(TokenError::Signature), "{forged}");
        }
        for bad in
            ["", "x", "vg_1.0.v.1", "vg_1.0.x.1.00000000000000000000000000000000", "a.b.c.d.e.f"]
        {
            assert_eq!(verify(&key, "box_a", bad, 10), Err(TokenError::Malformed), "{bad}");
        }
    }
}
