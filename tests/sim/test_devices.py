import pytest

from sim.rules.devices import GpuSpec, architecture_limits, preset, presets, spec_from_device
from sim.inputs.errors import UserError

REQUIRED = ["V100", "T4", "A100 40GB", "A100 80GB", "RTX 3090", "L40S", "RTX 4090", "H100 SXM",
            "H100 PCIe", "H200", "B200", "RTX 5090"]


def test_required_presets_and_capabilities():
    assert set(REQUIRED) <= set(presets())
    assert {preset(n).cc_string for n in presets()} == {"7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"}
    assert max(preset(n).sm_count for n in presets()) == 170


@pytest.mark.parametrize("typed,name", [("h200", "H200"), ("l40s", "L40S"), ("a100-80gb", "A100 80GB"),
                                        ("RTX5090", "RTX 5090"), ("h100 sxm", "H100 SXM")])
def test_names_match_loosely(typed, name):
    assert preset(typed).name == name


def test_unknown_name_lists_the_choices():
    with pytest.raises(UserError, match="H200"):
        preset("GTX 480")


def test_article_figures():
    l40s = preset("L40S")
    assert (l40s.sm_count, l40s.max_threads_per_sm, l40s.max_warps_per_sm) == (142, 1536, 48)
    assert l40s.l2_bytes == 96 * 2**20 and l40s.compute_capability == (8, 9)
    assert (preset("A100 40GB").sm_count, preset("H100 SXM").sm_count, preset("H100 PCIe").sm_count) == (108, 132, 114)


def test_every_preset_names_its_source_and_round_trips():
    for name in presets():
        spec = preset(name)
        assert spec.source and spec.peak_dram_gbps > 0 and spec.smem_per_block_optin_bytes <= spec.smem_per_sm_bytes
        assert GpuSpec.from_dict(spec.to_dict()) == spec


def test_spec_from_device_overrides_with_measured_values():
    spec = spec_from_device(name="NVIDIA H200", compute_capability=(9, 0), sm_count=132, l2_bytes=62914560,
                            memory_bytes=150109880320, peak_dram_gbps=4813.0, clock_mhz=1980,
                            max_blocks_per_sm=32, smem_per_sm_bytes=233472)
    assert spec.detected and spec.max_warps_per_sm == 64 and spec.gpc_count == 8
    with pytest.raises(UserError):
        architecture_limits((6, 1))
    with pytest.raises(TypeError):
        spec_from_device(name="x", compute_capability="9.0", sm_count=1, l2_bytes=1, memory_bytes=1,
                         peak_dram_gbps=1, clock_mhz=1, bogus=3)


@pytest.mark.parametrize("cc,nearest", [((12, 1), "12.0"), ((10, 3), "10.0"), ((8, 7), "8.6"), ((11, 0), "10.0"),
                                        ((6, 1), "7.0")])
def test_a_capability_we_do_not_model_still_gives_a_spec(cc, nearest):
    spec = spec_from_device(name="future GPU", compute_capability=cc, sm_count=48, l2_bytes=1,
                            memory_bytes=1, peak_dram_gbps=100.0, clock_mhz=1000, max_threads_per_sm=1536)
    assert spec.compute_capability == cc and spec.max_threads_per_sm == 1536
    assert f"compute capability {nearest} assumed" in spec.source


def test_dense_bf16_tensor_rates_are_sourced_where_given():
    """Only presets with a sourced datasheet figure carry one; the figure is in the source text."""
    assert preset("H200").tensor_tflops_bf16 == 989.4  # 1,979 with 2:4 sparsity, halved
    assert preset("A100 80GB").tensor_tflops_bf16 == 312
    assert preset("V100").tensor_tflops_bf16 is None  # Volta has no BF16 tensor cores
    for name in presets():
        spec = preset(name)
        if spec.tensor_tflops_bf16 is not None:
            assert "BF16" in spec.source.upper().replace("BFLOAT16", "BF16"), name
            assert f"{spec.tensor_tflops_bf16:,g}" in spec.source, name


def test_a_model_name_alone_names_the_candidates():
    assert preset("b200").name == "B200" and preset("RTX-5090").name == "RTX 5090"
    with pytest.raises(UserError, match="could be A100 40GB or A100 80GB"):
        preset("A100")
    with pytest.raises(UserError, match="could be H100 SXM or H100 PCIe"):
        preset("h100")
    with pytest.raises(UserError, match="unknown GPU 'A10'"):
        preset("A10")
