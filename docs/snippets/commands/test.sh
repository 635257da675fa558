cargo xtask test
