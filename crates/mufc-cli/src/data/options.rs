//! The options of loading: how the first CSV record is treated
//! ([`Header`]) and which column names the clients ([`LoadOptions`]).

/// How the first CSV record is treated.
///
/// # Example
///
/// ```
/// use mufc_cli::data::Header;
///
/// assert_eq!(Header::default(), Header::Auto);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Header {
    /// A header when none of its feature fields is a number; data when all
    /// of them are; an error when it is a mix (a typo in the first data row
    /// must not silently turn it into a header).
    #[default]
    Auto,
    /// The first record is a header and is skipped.
    Present,
    /// There is no header: the first record is data.
    Absent,
}

impl Header {
    /// The header a command line's `--header` flag names: present when
    /// set, else guessed ([`Header::Auto`]).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc_cli::data::Header;
    ///
    /// assert_eq!(Header::from_flag(true), Header::Present);
    /// assert_eq!(Header::from_flag(false), Header::Auto);
    /// ```
    pub fn from_flag(present: bool) -> Self {
        if present { Self::Present } else { Self::Auto }
    }
}

/// Options for [`load`](super::load), [`read_csv`](super::read_csv) and
/// [`read_npy`](super::read_npy).
///
/// # Example
///
/// ```
/// use mufc_cli::data::{Header, LoadOptions};
///
/// let opts = LoadOptions { header: Header::Present, client_column: Some(0), id_column: Some(1) };
/// assert_eq!(LoadOptions::default().client_column, None);
/// # let _ = opts;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// How the first CSV record is treated (ignored for `.npy`).
    pub header: Header,
    /// The 0-based column holding each row's client name, kept verbatim
    /// (a string or an integer); it is not a feature. In a `.npy` file
    /// its values must be non-negative integers.
    pub client_column: Option<usize>,
    /// The 0-based column (counted in the file, the client column
    /// included) holding each row's record id, kept verbatim (a string or
    /// an integer, unique in the file); it is not a feature. In a `.npy`
    /// file its values must be integers.
    pub id_column: Option<usize>,
}
