cargo xtask conformance --data-dir target/conformance-data
