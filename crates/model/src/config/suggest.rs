//! "Did you mean": for an error that names a misspelt key or value and lists what is allowed (serde's
//! "unknown field `x`, expected one of `a`, `b`" and this crate's "unknown scheme \"x\"; allowed: a, b"),
//! the allowed name closest to it by edit distance (Damerau-Levenshtein, the `strsim` crate), or, for a
//! name that starts several allowed ones (`ecn` for `ecn_marking`, `ecn_threshold`), those.

/// The misspelt name and the allowed ones, read from the message.
fn parse(msg: &str) -> Option<(&str, Vec<&str>)> {
    for head in ["unknown field `", "unknown variant `"] {
        if let Some(rest) = msg.strip_prefix(head) {
            let (word, tail) = rest.split_once('`')?;
            // the names between backquotes after "expected ..."
            let allowed = tail.split('`').skip(1).step_by(2).collect();
            return Some((word, allowed));
        }
    }
    let rest = msg.strip_prefix("unknown ")?;
    let (_, quoted) = rest.split_once('"')?;
    let (word, tail) = quoted.split_once('"')?;
    let (_, list) = tail.split_once("allowed: ")?;
    let list = list.split(';').next().unwrap_or("");
    let allowed = list.split(',').map(|s| s.trim().trim_end_matches('.')).filter(|s| !s.is_empty() && !s.contains(' ')).collect();
    Some((word, allowed))
}

/// "; did you mean `x`?" (or "one of `x`, `y`") for a message that names an unknown name and lists the
/// allowed ones, when one is close; empty otherwise.
pub(crate) fn hint(msg: &str) -> String {
    let Some((word, allowed)) = parse(msg) else {
        return String::new();
    };
    if word.is_empty() || allowed.is_empty() || allowed.contains(&word) {
        return String::new();
    }
    let lower = word.to_lowercase();
    // a typo: up to one edit in three characters (at least one)
    let limit = (lower.chars().count() / 3).max(1);
    let best = allowed.iter().map(|a| (strsim::damerau_levenshtein(&lower, &a.to_lowercase()), *a)).min_by_key(|(d, _)| *d).filter(|(d, _)| *d <= limit);
    if let Some((_, a)) = best {
        return format!("; did you mean `{a}`?");
    }
    // a prefix: `ecn` for ecn_marking and ecn_threshold
    let starts: Vec<&str> = allowed.iter().copied().filter(|a| lower.len() >= 2 && a.to_lowercase().starts_with(&lower)).take(4).collect();
    match starts.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean `{one}`?"),
        many => format!("; did you mean one of {}?", many.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::hint;

    #[test]
    fn a_typo_gets_the_closest_allowed_name_and_a_stranger_gets_nothing() {
        let serde = "unknown field `lnk_rate`, expected one of `kind`, `k`, `link_rate`, `link_delay`";
        assert_eq!(hint(serde), "; did you mean `link_rate`?");
        assert_eq!(hint("unknown field `durtion`, expected `duration` or `seed`"), "; did you mean `duration`?");
        assert_eq!(hint("unknown scheme \"detial\"; allowed: fh, scatter, lps, detail"), "; did you mean `detail`?");
        assert_eq!(hint("unknown workload \"incst\"; allowed: retrieval, incast, cdf; or ..."), "; did you mean `incast`?");
        assert_eq!(
            hint("unknown field `ecn`, expected one of `preset`, `ecn_marking`, `ecn_threshold`"),
            "; did you mean one of `ecn_marking`, `ecn_threshold`?"
        );
        assert_eq!(hint("unknown field `zzzzzz`, expected one of `kind`, `k`"), "");
        assert_eq!(hint("must be positive"), "");
        assert_eq!(hint("unknown variant `Reno`, expected one of `reno`, `dctcp`"), "; did you mean `reno`?");
    }
}
