//! Box ids and secrets.

/// Letters for ids: lowercase, without look-alikes.
const ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";

fn random(buf: &mut [u8]) {
    getrandom::fill(buf).expect("the kernel's random source is readable");
}

/// A new box id, such as `box_7hq3k2m9x4ab`.
pub fn new_box_id() -> String {
    let mut bytes = [0u8; 12];
    random(&mut bytes);
    let mut id = String::from("box_");
    id.extend(bytes.iter().map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char));
    id
}

/// Whether `s` is a box id (so it is safe in a container name and a URL):
/// the one grammar, [`holm_proto::BoxId::parse`].
pub fn is_box_id(s: &str) -> bool {
    holm_proto::BoxId::parse(s).is_ok()
}

/// A new secret: 32 random bytes, hex-encoded.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    random(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of a secret, in lowercase hex: what a box is given in place
/// of its secret ([`crate::runtime::ENV_SECRET_SHA256`]).
pub fn secret_digest(secret: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The secret of box `box_id` under a server's `key`: an HMAC-SHA256, so a
/// server that keeps its key and loses its records can work out the secret
/// of each box it made again, and no box holds it.
pub fn derived_secret(key: &[u8; 32], box_id: &str) -> String {
    use sha2::Digest;
    // HMAC (RFC 2104) over SHA-256, with a 32-byte key.
    let mut ipad = [0x36u8; 64];
    let mut opad = [0x5cu8; 64];
    for (i, k) in key.iter().enumerate() {
        ipad[i] ^= k;
        opad[i] ^= k;
    }
    let inner = sha2::Sha256::new()
        .chain_update(ipad)
        .chain_update(b"holm box secret\0")
        .chain_update(box_id.as_bytes())
        .finalize();
    let mac = sha2::Sha256::new().chain_update(opad).chain_update(inner).finalize();
    mac.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_well_formed_and_distinct() {
        let a = new_box_id();
        assert!(is_box_id(&a), "{a}");
        assert_ne!(a, new_box_id());
        assert!(!is_box_id("box_"));
        assert!(!is_box_id("box_../x"));
        assert!(!is_box_id("container"));
        assert_eq!(new_secret().len(), 64);
    }

    #[test]
    fn secrets_derive_per_box_and_key() {
        let k = [7u8; 32];
        let a = derived_secret(&k, "box_a");
        assert_eq!(a.len(), 64);
        assert_eq!(a, derived_secret(&k, "box_a"));
        assert_ne!(a, derived_secret(&k, "box_b"));
        assert_ne!(a, derived_secret(&[8u8; 32], "box_a"));
        assert_eq!(
            secret_digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
