"""ft_benchmark: a benchmark binary plus the smoke test that runs it once under `bazel test`."""

load("//:copts.bzl", "FT_TEST_COPTS")

def ft_benchmark(name, deps = []):
    """Declares `name` (from name.cc) and `name_smoke_test`.

    Args:
      name: the suite; its source is `<name>.cc`.
      deps: extra dependencies beside :side_by_side, :workloads, //:ft and Google Benchmark.
    """
    native.cc_binary(
        name = name,
        testonly = True,
        srcs = [name + ".cc"],
        copts = FT_TEST_COPTS,
        tags = ["benchmark"],
        deps = [
            ":side_by_side",
            ":workloads",
            "//:ft",
            "//third_party:benchmark",
        ] + deps,
    )

    # The binary runs every benchmark once on small sizes (FT_BENCH_SMOKE): a broken
    # benchmark fails `bazel test //...`; timing is meaningless here.
    native.sh_test(
        name = name + "_smoke_test",
        size = "small",
        srcs = ["smoke_test.sh"],
        args = ["$(location :%s)" % name],
        data = [":" + name],
    )
