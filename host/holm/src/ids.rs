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

/// Whether `s` looks like a box id (so it is safe in a container name and a URL).
pub fn is_box_id(s: &str) -> bool {
    s.strip_prefix("box_").is_some_and(|rest| {
        !rest.is_empty()
            && rest.len() <= 32
            && rest.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    })
}

/// A new secret: 32 random bytes, hex-encoded.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    random(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
}
