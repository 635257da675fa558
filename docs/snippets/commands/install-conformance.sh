cargo install --locked --path conformance
