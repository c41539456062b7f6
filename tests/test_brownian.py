import pytest
import torch

from limits.brownian import BrownianGrid, dyadic_levels, tree_sum


def test_coarse_increments_are_sums_of_fine_ones():
    grid = BrownianGrid(samples=5, size=3, steps=64, seed=1, block_steps=8)
    fine = torch.stack([grid(i / 64, (i + 1) / 64) for i in range(64)])
    for L in (1, 2, 4, 8, 16, 32):
        r = 64 // L
        for k in range(L):
            coarse = grid(k / L, (k + 1) / L)
            torch.testing.assert_close(coarse, fine[k * r:(k + 1) * r].sum(0), rtol=0, atol=1e-14)


def test_tree_sum_matches_query_bit_for_bit_across_blocks():
    grid = BrownianGrid(samples=4, size=2, steps=32, seed=7, block_steps=4)
    fine = torch.cat([grid.block(b) for b in range(grid.num_blocks)])
    levels = dyadic_levels(fine)
    for j, level in enumerate(levels):
        L = 32 >> j
        for k in range(L):
            assert torch.equal(grid(k / L, (k + 1) / L), level[k])
    assert torch.equal(grid(0.0, 1.0), tree_sum(fine))


def test_increments_have_brownian_variance():
    grid = BrownianGrid(samples=4000, size=2, steps=16, seed=3)
    inc = grid(0.25, 0.75)
    assert abs(inc.var().item() - 0.5) < 0.03
    assert abs(grid(0.0, 1.0 / 16).var().item() - 1 / 16) < 0.004


def test_same_seed_same_path_different_seed_different_path():
    a = BrownianGrid(3, 4, 32, seed=11)(0.0, 1.0)
    b = BrownianGrid(3, 4, 32, seed=11)(0.0, 1.0)
    c = BrownianGrid(3, 4, 32, seed=12)(0.0, 1.0)
    assert torch.equal(a, b)
    assert not torch.allclose(a, c)


def test_queries_in_any_order_and_single_time_form():
    grid = BrownianGrid(2, 2, 16, seed=0, block_steps=2)
    late = grid(0.5, 0.75)
    early = grid(0.0, 0.25)
    assert torch.equal(grid(0.5, 0.75), late)
    assert torch.equal(grid(0.25), early)  # B(t) - B(0)


def test_off_grid_and_bad_arguments_are_rejected():
    grid = BrownianGrid(2, 2, 16)
    with pytest.raises(ValueError, match="not on the grid"):
        grid(0.0, 0.1)
    with pytest.raises(ValueError, match="out of order"):
        grid(0.5, 0.25)
    with pytest.raises(ValueError, match="power of two"):
        BrownianGrid(2, 2, 12)
    with pytest.raises(ValueError, match="samples"):
        BrownianGrid(0, 2, 16)


def test_memory_is_one_block():
    grid = BrownianGrid(samples=10, size=10, steps=1 << 20, seed=0, block_steps=64)
    grid(0.5, 0.5 + 64 / (1 << 20))
    assert grid.block(grid.num_blocks // 2).numel() == 64 * 10 * 10
