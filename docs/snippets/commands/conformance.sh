cargo xtask conformance
