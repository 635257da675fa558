# ANCHOR: once
cosmos-conformance --endpoint http://localhost:8081
# ANCHOR_END: once
# ANCHOR: write
cosmos-conformance --endpoint http://localhost:8081 \
    --write-expectations conformance/expectations.toml
# ANCHOR_END: write
# ANCHOR: gate
cosmos-conformance --endpoint http://localhost:8081 \
    --expectations conformance/expectations.toml \
    --snapshot conformance/outcomes.snap --report-dir target/conformance
# ANCHOR_END: gate
