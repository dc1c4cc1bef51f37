//! The named choices (`Privacy`, here, and the library's `mufc::Masking`,
//! `mufc::SecAggGraph`, `mufc::ServerPoints`, `mufc::ClientTraining`)
//! parsed on the command line. The library gives each value its name and
//! a line of help; this parser turns them into clap's possible values, so
//! `--help` lists them and a wrong word gets clap's own error, without the
//! library depending on clap.

use std::str::FromStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

/// A clap value parser for one of the library's named enums: clap's own
/// parser of the possible values (so `--help` lists them with their help,
/// and a wrong word gets clap's usual error), mapped through the enum's
/// `FromStr`.
pub(crate) fn parser<T>(
    all: &'static [T],
    name: fn(T) -> &'static str,
    help: fn(T) -> &'static str,
) -> impl TypedValueParser<Value = T>
where
    T: Copy + FromStr + Send + Sync + 'static,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    PossibleValuesParser::new(
        all.iter()
            .map(move |&v| PossibleValue::new(name(v)).help(help(v))),
    )
    .try_map(|word| word.parse::<T>())
}

/// The parser of a named enum: `named!(mufc::Masking)`.
macro_rules! named {
    ($t:ty) => {
        $crate::cli::named::parser::<$t>(<$t>::ALL, <$t>::name, <$t>::help)
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
