//! Compiles `proto/mufc.proto` with the protoc binary that
//! `protoc-bin-vendored` ships, so that building needs only the Rust
//! toolchain.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    println!("cargo:rerun-if-changed=proto/mufc.proto");
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_with_config(config, &["proto/mufc.proto"], &["proto"])?;
    Ok(())
}
