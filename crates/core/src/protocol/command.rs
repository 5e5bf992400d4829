//! One Redis command in RESP form, built once and written as is (redis-rs's
//! `Cmd` grows a buffer argument by argument and is packed again at every
//! send, which cost a lock cycle more than its round trip's own work).

/// One command, already in RESP form: built once, written as is.
#[derive(Clone, PartialEq, Eq)]
pub struct Command(Vec<u8>);

/// An argument of a [`Command`]: bytes or a number.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    /// Sent as is.
    Bytes(&'a [u8]),
    /// Sent in decimal.
    Int(u64),
}

impl<'a> From<&'a [u8]> for Arg<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Self::Bytes(bytes)
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(text: &'a str) -> Self {
        Self::Bytes(text.as_bytes())
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Arg<'a> {
    fn from(bytes: &'a [u8; N]) -> Self {
        Self::Bytes(bytes)
    }
}

impl<'a> From<&'a Vec<u8>> for Arg<'a> {
    fn from(bytes: &'a Vec<u8>) -> Self {
        Self::Bytes(bytes)
    }
}

impl From<u64> for Arg<'_> {
    fn from(n: u64) -> Self {
        Self::Int(n)
    }
}

impl Command {
    /// The command made of `args` (its name first), in one allocation.
    pub fn new<'a, I>(args: I) -> Self
    where
        I: IntoIterator<Item = Arg<'a>>,
        I::IntoIter: Clone,
    {
        let args = args.into_iter();
        let (count, size) = args.clone().fold((0usize, 0usize), |(n, size), arg| {
            let len = match arg {
                Arg::Bytes(b) => b.len(),
                Arg::Int(_) => 20,
            };
            // "$" + up to 20 digits + CRLF + the argument + CRLF
            (n + 1, size + len + 25)
        });
        let mut out = Vec::with_capacity(size + 24);
        let mut digits = itoa::Buffer::new();
        out.push(b'*');
        out.extend_from_slice(digits.format(count).as_bytes());
        out.extend_from_slice(b"\r\n");
        let mut number = itoa::Buffer::new();
        for arg in args {
            let bytes = match arg {
                Arg::Bytes(b) => b,
                Arg::Int(i) => number.format(i).as_bytes(),
            };
            out.push(b'$');
            out.extend_from_slice(digits.format(bytes.len()).as_bytes());
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(bytes);
            out.extend_from_slice(b"\r\n");
        }
        Self(out)
    }

    /// The start of a command of `count` arguments, `first` of them
    /// encoded: for [`Command::with_head`], when those are the same for
    /// many commands (a lock's own keys).
    pub fn head<'a, I>(count: usize, first: I) -> Vec<u8>
    where
        I: IntoIterator<Item = Arg<'a>>,
        I::IntoIter: Clone,
    {
        let mut out = Self::new(first).0;
        // Replace the header of `first` alone with the whole command's.
        let end = out.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
        let header = format!("*{count}\r\n");
        out.splice(..end, header.bytes());
        out
    }

    /// A command that starts with `head` (see [`Command::head`]) and goes
    /// on with `rest`.
    pub fn with_head(head: &[u8], rest: &[Arg<'_>]) -> Self {
        let size: usize = rest
            .iter()
            .map(|arg| match arg {
                Arg::Bytes(b) => b.len() + 25,
                Arg::Int(_) => 45,
            })
            .sum();
        let mut out = Vec::with_capacity(head.len() + size);
        out.extend_from_slice(head);
        let (mut digits, mut number) = (itoa::Buffer::new(), itoa::Buffer::new());
        for arg in rest {
            let bytes = match *arg {
                Arg::Bytes(b) => b,
                Arg::Int(i) => number.format(i).as_bytes(),
            };
            out.push(b'$');
            out.extend_from_slice(digits.format(bytes.len()).as_bytes());
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(bytes);
            out.extend_from_slice(b"\r\n");
        }
        Self(out)
    }

    /// The command of `args`, all bytes (a name and plain arguments).
    pub fn of(args: &[&[u8]]) -> Self {
        Self::new(args.iter().map(|a| Arg::Bytes(a)))
    }

    /// The command in RESP form.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Arguments may be tokens or passwords: only the size is shown.
        write!(f, "Command({} bytes)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_packed_as_redis_rs_packs_them() {
        let mut cmd = redis::cmd("SET");
        cmd.arg(&b"k\r\n\0"[..])
            .arg("tok")
            .arg("NX")
            .arg("PX")
            .arg(1500u64);
        let expected = cmd.get_packed_command();
        let args = [
            Arg::from("SET"),
            Arg::from(&b"k\r\n\0"[..]),
            Arg::from("tok"),
            Arg::from("NX"),
            Arg::from("PX"),
            Arg::Int(1500),
        ];
        assert_eq!(Command::new(args).bytes(), &expected[..]);
        let head = Command::head(6, args[..2].iter().copied());
        assert_eq!(Command::with_head(&head, &args[2..]).bytes(), &expected[..]);
        assert_eq!(Command::of(&[b"PING"]).bytes(), b"*1\r\n$4\r\nPING\r\n");
        assert_eq!(
            Command::new([Arg::Int(0), Arg::Int(u64::MAX)]).bytes(),
            b"*2\r\n$1\r\n0\r\n$20\r\n18446744073709551615\r\n"
        );
    }
}
