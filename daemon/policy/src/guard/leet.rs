//! Leetspeak undone: `p4ssw0rd`, `pa$$word`, `s3cr3t`, `t0k3n` read as
//! the words they spell.
//!
//! Only runs of characters that mix letters with the digits and signs
//! that stand for letters are rewritten, so that plain numbers ("5551234")
//! and names such as `ed25519` keep their meaning in the original text,
//! which is judged as well.

/// The letter each sign or digit stands for.
fn letter(c: char) -> Option<char> {
    Some(match c {
        '0' => 'o',
        '1' | '!' | '|' => 'i',
        '3' => 'e',
        '4' | '@' => 'a',
        '5' | '$' => 's',
        '7' | '+' => 't',
        '8' => 'b',
        _ => return None,
    })
}

/// `text` with every letter-and-sign run spelt in letters, or `None` when
/// nothing in it is leetspeak.
pub(crate) fn unleet(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    let mut changed = false;
    for c in text.chars() {
        if c.is_alphanumeric() || letter(c).is_some() {
            run.push(c);
            continue;
        }
        changed |= flush(&mut run, &mut out);
        out.push(c);
    }
    changed |= flush(&mut run, &mut out);
    changed.then_some(out)
}

/// Appends `run`, rewritten when it mixes letters and stand-ins; whether it
/// was rewritten.
fn flush(run: &mut String, out: &mut String) -> bool {
    // Signs after the last letter or digit are punctuation: "password!".
    let word_end = run
        .char_indices()
        .rfind(|(_, c)| c.is_alphanumeric())
        .map_or(0, |(at, c)| at + c.len_utf8());
    let tail = run.split_off(word_end);
    let leet = rewrite(run, out);
    out.push_str(&tail);
    run.clear();
    leet
}

fn rewrite(run: &str, out: &mut String) -> bool {
    let letters = run.chars().filter(|c| c.is_alphabetic()).count();
    let stand_ins = run.chars().filter(|&c| letter(c).is_some()).count();
    let leet = letters > 0 && stand_ins > 0;
    if leet {
        out.extend(run.chars().map(|c| letter(c).unwrap_or(c)));
    } else {
        out.push_str(run);
    }
    leet
}

#[cfg(test)]
mod tests {
    use super::unleet;

    #[test]
    fn leetspeak_reads_as_letters() {
        assert_eq!(unleet("p4ssw0rd").as_deref(), Some("password"));
        assert_eq!(unleet("Your pa$$word").as_deref(), Some("Your password"));
        assert_eq!(unleet("s3cr3t t0k3n!").as_deref(), Some("secret token!"));
        assert_eq!(unleet("call 5551234"), None);
        assert_eq!(unleet("plain words"), None);
    }
}
