import gc

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


def _storages(obj, found, seen=None):
    """Distinct tensor storages (data_ptr -> nbytes) reachable from obj's slots / __dict__ / containers."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return found
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        storage = obj.untyped_storage()
        found[storage.data_ptr()] = storage.nbytes()
        return found
    if isinstance(obj, dict):
        children = [*obj.keys(), *obj.values()]
    elif isinstance(obj, (list, tuple, set, frozenset)):
        children = list(obj)
    else:
        names = [name for cls in type(obj).__mro__ for name in cls.__dict__.get("__slots__", ())]
        children = [getattr(obj, name) for name in names if hasattr(obj, name)]
        children += list(getattr(obj, "__dict__", {}).values())
    for child in children:
        if isinstance(child, (torch.Tensor, dict, list, tuple, set, frozenset, BrownianGrid)):
            _storages(child, found, seen)
    return found


def _live_tensor_bytes():
    """Bytes of the distinct storages of every tensor the garbage collector can see (any cache, anywhere)."""
    gc.collect()
    found = {}
    for obj in gc.get_objects():
        if issubclass(type(obj), torch.Tensor):  # type(), not isinstance: no proxy's __class__ is touched
            storage = obj.untyped_storage()
            found[storage.data_ptr()] = storage.nbytes()
    return sum(found.values())


def test_memory_is_one_block():
    # Walk a path of 256 blocks in every way a reader does (fine steps, whole blocks, coarse dyadic
    # increments spanning many blocks, the whole path): what stays alive afterwards must be O(one block)
    # — the latest block and its dyadic levels (< 2 blocks) — not O(steps).
    steps, block_steps, n, m = 1 << 14, 64, 10, 10
    block_bytes = block_steps * n * m * torch.finfo(torch.float64).bits // 8
    before = _live_tensor_bytes()
    grid = BrownianGrid(samples=n, size=m, steps=steps, seed=0, block_steps=block_steps)
    assert grid.num_blocks == 256
    assert grid.block(grid.num_blocks // 2).numel() == block_steps * n * m
    total = torch.zeros(n, m, dtype=torch.float64)  # read every increment, keep none (a view keeps its block)
    for b in range(grid.num_blocks):
        s, t = b * block_steps / steps, (b + 1) * block_steps / steps
        total += grid(s, t)
        total += grid(s, s + 1 / steps)
    for s, t in ((0.0, 1.0), (0.25, 0.75), (1.0 / steps, 1.0 - 1.0 / steps)):
        total += grid(s, t)
    held = sum(_storages(grid, {}).values())
    assert held >= block_bytes  # the inspection sees the latest block (it is not vacuous)
    assert held <= 3 * block_bytes, (
        f"the grid keeps {held / block_bytes:.1f} blocks of increments alive after a walk of "
        f"{grid.num_blocks} blocks (at most ~2 expected)"
    )
    grown = _live_tensor_bytes() - before
    assert grown >= block_bytes  # the accounting sees the grid's latest block
    assert grown <= 3 * block_bytes, (
        f"{grown / block_bytes:.1f} blocks of tensors stay alive after a walk of {grid.num_blocks} blocks "
        f"(at most ~2 expected): increments are cached somewhere"
    )
