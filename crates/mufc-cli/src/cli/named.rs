//! The library's named choices (`mufc::Privacy`, `mufc::Masking`,
//! `mufc::SecAggGraph`, `mufc::ServerPoints`, `mufc::ClientTraining`)
//! parsed on the command line. The library gives each value its name and
//! a line of help; this parser turns them into clap's possible values, so
//! `--help` lists them and a wrong word gets clap's own error, without the
//! library depending on clap.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

/// A clap value parser for one of the library's named enums.
#[derive(Clone, Copy)]
pub(crate) struct Named<T: 'static> {
    all: &'static [T],
    name: fn(T) -> &'static str,
    help: fn(T) -> &'static str,
}

impl<T: Copy> Named<T> {
    /// The parser of the values `all`, named and explained by `name` and
    /// `help` (the enum's `ALL`, `name` and `help`).
    pub(crate) const fn new(
        all: &'static [T],
        name: fn(T) -> &'static str,
        help: fn(T) -> &'static str,
    ) -> Self {
        Self { all, name, help }
    }

    fn values(&self) -> impl Iterator<Item = PossibleValue> + '_ {
        self.all
            .iter()
            .map(|&v| PossibleValue::new((self.name)(v)).help((self.help)(v)))
    }
}

impl<T: Copy + Send + Sync + 'static> TypedValueParser for Named<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        // clap's own parser gives the usual error ("invalid value ...
        // [possible values: ...]") for a word that is not a name.
        let word = PossibleValuesParser::new(self.values()).parse_ref(cmd, arg, value)?;
        self.all
            .iter()
            .copied()
            .find(|&v| (self.name)(v) == word)
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.values()))
    }
}

/// The parser of a named enum of the library: `named!(mufc::Privacy)`.
macro_rules! named {
    ($t:ty) => {
        $crate::cli::named::Named::<$t>::new(<$t>::ALL, <$t>::name, <$t>::help)
    };
}
pub(crate) use named;

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Args {
        #[arg(long, value_parser = named!(mufc::Masking), default_value_t = mufc::Masking::Dealer)]
        masking: mufc::Masking,
    }

    #[test]
    fn names_parse_to_their_values_and_others_are_refused_with_the_list() {
        let a = Args::try_parse_from(["x", "--masking", "secagg"]).unwrap();
        assert_eq!(a.masking, mufc::Masking::SecAgg);
        assert_eq!(
            Args::try_parse_from(["x"]).unwrap().masking,
            mufc::Masking::Dealer
        );
        let e = Args::try_parse_from(["x", "--masking", "dealr"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid value 'dealr'"), "{e}");
        assert!(
            e.contains("dealer") && e.contains("pairwise") && e.contains("secagg"),
            "{e}"
        );
    }
}
