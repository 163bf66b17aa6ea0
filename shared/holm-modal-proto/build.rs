//! Generates `src/generated` from `proto/` with the `regen` feature (which
//! needs protoc); without it, nothing: the checked-in code is used.

fn main() {
    #[cfg(feature = "regen")]
    {
        let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/generated");
        tonic_prost_build::configure()
            .build_client(true)
            .build_server(true)
            .build_transport(false)
            .out_dir(&out)
            .file_descriptor_set_path(out.join("modal.fds"))
            .compile_protos(
                &["proto/modal_proto/api.proto", "proto/modal_proto/task_command_router.proto"],
                &["proto"],
            )
            .expect("generate Modal's messages (is protoc installed?)");
        println!("cargo:rerun-if-changed=proto");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
