"""ctypes bindings of the integration kernels' host entry points.

Each croq host function `f` is `extern "C" int f(...)`: a device pointer and
one int64 extent per dimension for each tensor, int64 for index scalars,
float for f32 scalars, a CUstream for stream parameters. It returns 0 on success.
"""
import ctypes

import torch

_TENSOR = "tensor"
_INDEX = "index"
_STREAM = "stream"
_F32 = "f32"
# A scalar the function returns: the entry point writes it through a
# trailing pointer; the call returns it.
_RESULT_INDEX = "result index"

# Argument kinds of every entry point, in order.
SIGNATURES = {
    "divergent": [_TENSOR, _INDEX],
    "copy_f32": [_TENSOR, _TENSOR],
    "copy_f16": [_TENSOR, _TENSOR],
    "add": [_TENSOR, _TENSOR, _TENSOR],
    "matmul_db": [_TENSOR, _TENSOR, _TENSOR],
    "matmul_rr": [_TENSOR, _TENSOR, _TENSOR],
    "matmul_rc": [_TENSOR, _TENSOR, _TENSOR],
    "matmul_persistent": [_TENSOR, _TENSOR, _TENSOR],
    "spin_streams": [_TENSOR, _TENSOR, _INDEX],
    "spin_serial": [_TENSOR, _TENSOR, _INDEX],
    "spin_on": [_TENSOR, _INDEX, _STREAM],
    "count_blocks": [_TENSOR, _TENSOR],
    # The same kernels imported from Croqtile (test/Integration/croqtile).
    "divergent_co": [_TENSOR, _INDEX],
    "copy_co": [_TENSOR, _TENSOR],
    "copy_tma_bench_co": [_TENSOR, _TENSOR],
    "copy_rows_co": [_TENSOR, _TENSOR],
    "copy_rows_4x2048": [_TENSOR, _TENSOR],
    "copy_rows_16x512": [_TENSOR, _TENSOR],
    "copy_rows_8x1024_t512": [_TENSOR, _TENSOR],
    "copy_rows_tma": [_TENSOR, _TENSOR],
    "copy_rows_tma_16": [_TENSOR, _TENSOR],
    "add_co": [_TENSOR, _TENSOR, _TENSOR],
    "matmul_db_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_rr_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_rc_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_lanes_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_transp_co": [_TENSOR, _TENSOR, _TENSOR],
    "wgmma_transp_co": [_TENSOR, _TENSOR, _TENSOR],
    "tensor_init_co": [_TENSOR, _TENSOR],
    "select_co": [_TENSOR, _TENSOR, _TENSOR, _INDEX],
    "mma_cr_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_cc_co": [_TENSOR, _TENSOR, _TENSOR],
    "unsigned_co": [_TENSOR] * 6,
    "signedness_co": [_TENSOR] * 7,
    "double_buffer_co": [_TENSOR, _TENSOR, _TENSOR],
    "any_array_co": [_TENSOR] * 2,
    "matmul_persistent_co": [_TENSOR, _TENSOR, _TENSOR],
    "spin_streams_co": [_TENSOR, _TENSOR, _INDEX],
    "loops_co": [_TENSOR],
    "ring_sum_co": [_TENSOR, _TENSOR],
    "ring_sum_1p2c_co": [_TENSOR, _TENSOR],
    "whole_wait_co": [_TENSOR, _TENSOR],
    "runtime_warps_co": [_TENSOR, _TENSOR, _TENSOR],
    "runtime_threads_co": [_TENSOR, _TENSOR, _INDEX],
    "runtime_bounded_co": [_TENSOR, _TENSOR, _INDEX],
    "buffer_index_co": [_TENSOR, _TENSOR, _INDEX, _INDEX],
    "inthreads_assign_co": [_TENSOR, _TENSOR],
    "tma_groups_co": [_TENSOR, _TENSOR, _TENSOR],
    "tree_sum_co": [_TENSOR, _TENSOR],
    "grid_dims_co": [_TENSOR],
    "grid_rows_co": [_TENSOR],
    "grid_planes_co": [_TENSOR],
    "store_rows_co": [_TENSOR, _TENSOR, _TENSOR],
    "swizzled_elements_co": [_TENSOR, _TENSOR, _TENSOR, _TENSOR],
    "chained_mma_co": [_TENSOR, _TENSOR, _TENSOR, _TENSOR],
    "chained_mma_transp_co": [_TENSOR, _TENSOR, _TENSOR, _TENSOR],
    "future_swap_wgmma_co": [_TENSOR, _TENSOR, _TENSOR],
    "future_swap_tma_array_co": [_TENSOR, _TENSOR, _TENSOR],
    "store_sqz_co": [_TENSOR, _TENSOR, _TENSOR],
    "chained_mma_panel_co": [_TENSOR, _TENSOR, _TENSOR, _TENSOR],
    "activations_co": [_TENSOR, _TENSOR],
    "activations_f16_co": [_TENSOR, _TENSOR],
    "rounding_co": [_TENSOR, _TENSOR],
    "rounding_f16_co": [_TENSOR, _TENSOR],
    "guarded_columns_co": [_TENSOR],
    "conditional_ring_co": [_TENSOR, _TENSOR],
    "short_circuit_co": [_TENSOR, _TENSOR],
    "tma_groups_cluster_co": [_TENSOR, _TENSOR, _TENSOR],
    "tma_lowest_co": [_TENSOR, _TENSOR],
    "tma_roles_co": [_TENSOR] * 3,
    "tma_roles_once_co": [_TENSOR] * 2,
    "tma_roles_wgmma_co": [_TENSOR] * 3,
    "gemm_ws4_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_ws2_co": [_TENSOR, _TENSOR, _TENSOR],
    "matmul_1p1c_co": [_TENSOR, _TENSOR, _TENSOR],
    "matmul_1p1c_s4_co": [_TENSOR, _TENSOR, _TENSOR],
    "tma_copy_co": [_TENSOR, _TENSOR],
    "tma_plain_wgmma_co": [_TENSOR] * 3,
    "tma_subwarp_co": [_TENSOR, _TENSOR],
    "tma_ws_d1_co": [_TENSOR, _TENSOR, _TENSOR],
    "tma_ws_d2_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_tma_co": [_TENSOR, _TENSOR, _TENSOR],
    "sqz_stages_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_sync_warpgroups_co": [_TENSOR] * 3,
    "gemm_sync_wg4": [_TENSOR] * 3,
    "gemm_sync_dma": [_TENSOR] * 3,
    "gemm_release_forms_co": [_TENSOR] * 3,
    "gemm_release_no_roles": [_TENSOR] * 3,
    "gemm_release_no_roles_s2": [_TENSOR] * 3,
    "persistent_wgmma_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_tma_persistent_co": [_TENSOR, _TENSOR, _TENSOR],
    "tma_mma_async_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_tma_f16_co": [_TENSOR, _TENSOR, _TENSOR],
    "tma_ws_stacked_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_tma_grouped_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_f16_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_f16_bn128": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_persistent_f16_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_persistent_f16_bn128": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_persistent_f16_staged": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_f16_staged": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_f16_staged_bk32": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_f16_turns": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_f16_cluster2": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_f16_cluster2_turns": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_persistent_f16_cluster2": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_pingpong_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_pingpong_ordered": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_pingpong_bm64": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_pingpong_cluster2": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_persistent_f16_cluster2_turns": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_persistent_f16_cluster2_staged": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_persistent_f16_staged_d3": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_stream_k_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_stream_k_bn128": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_stream_k_s3": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_stream_k_staged": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_cluster_sync_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_cluster4_sync_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_persistent_f16_turns": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_persistent_f16_staged_bk32": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_splitk_co": [_TENSOR, _TENSOR, _TENSOR, _INDEX],
    "gemm_splitk_bn128": [_TENSOR, _TENSOR, _TENSOR, _INDEX],
    "gemm_splitk_mc2_bn128": [_TENSOR, _TENSOR, _TENSOR, _INDEX],
    "gemm_splitk_staged_bn128": [_TENSOR, _TENSOR, _TENSOR, _INDEX],
    "gemm_splitk_turns": [_TENSOR, _TENSOR, _TENSOR, _INDEX],
    "gemm_splitk_cluster_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_splitk_cluster2": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_splitk_cluster4_bn128": [_TENSOR, _TENSOR, _TENSOR],
    "warp_gemm_async_co": [_TENSOR, _TENSOR, _TENSOR],
    "clamp_corners_co": [_TENSOR, _F32],
    "shapes_co": [_TENSOR, _TENSOR],
    "levels_co": [_TENSOR, _TENSOR],
    # Returned tensors are trailing output arguments.
    "returns_co": [_TENSOR, _TENSOR],
    "scalar_co": [_TENSOR, _INDEX, _RESULT_INDEX],
    "print_co": [_TENSOR],
    "mask_co": [_TENSOR, _TENSOR, _TENSOR, _INDEX],
    "views_co": [_TENSOR] * 4,
    "view_rest_co": [_TENSOR] * 2,
    "view_chunk_co": [_TENSOR] * 2,
    "sqz_chunk_co": [_TENSOR] * 2,
    "rows_sqz_co": [_TENSOR] * 2,
    "transp_co": [_TENSOR] * 4,
    "tma_future_co": [_TENSOR, _TENSOR],
    "tma_swap_co": [_TENSOR, _TENSOR],
    "tma_rotate_co": [_TENSOR, _TENSOR],
    "tma_rewait_co": [_TENSOR, _TENSOR],
    "tma_guarded_co": [_TENSOR, _TENSOR],
    "tma_store_async_co": [_TENSOR, _TENSOR],
    "tma_store_async_wide_co": [_TENSOR, _TENSOR],
    "wgmma_block_frag_co": [_TENSOR, _TENSOR],
    "wgmma_block_frag_k_co": [_TENSOR, _TENSOR],
    "matmul_1p1c_swiz_co": [_TENSOR, _TENSOR, _TENSOR],
    "shifted_chunks_co": [_TENSOR, _TENSOR],
    "ch6_as_printed_co": [_TENSOR, _TENSOR, _TENSOR],
    "per_thread_tiles_co": [_TENSOR, _TENSOR, _TENSOR],
    "atomics_co": [_TENSOR] * 4,
    "gemm_fp8_co": [_TENSOR, _TENSOR, _TENSOR],
    "wgmma_rc_co": [_TENSOR, _TENSOR, _TENSOR],
    "frag_softmax_co": [_TENSOR, _TENSOR, _TENSOR],
    "frag_sum_co": [_TENSOR, _TENSOR, _TENSOR],
    "wg_frag_co": [_TENSOR] * 6,
    "wgmma_rs_load_co": [_TENSOR, _TENSOR, _TENSOR],
    "wgmma_rs_fp8_co": [_TENSOR, _TENSOR, _TENSOR],
    "wgmma_rs_s8_co": [_TENSOR, _TENSOR, _TENSOR],
    "wgmma_rs_u8s8_co": [_TENSOR, _TENSOR, _TENSOR],
    "blockscale_fused_co": [_TENSOR] * 5,
    "blockscale_ws_co": [_TENSOR] * 5,
    "blockscale_t_co": [_TENSOR] * 5,
    "sparse_co": [_TENSOR] * 4,
    "sparse_bf16_co": [_TENSOR] * 4,
    "sparse_e4m3_co": [_TENSOR] * 4,
    "flash_co": [_TENSOR] * 4,
    "flash_ws_co": [_TENSOR] * 4,
    "foreach_forms_co": [_TENSOR],
    "yield_co": [_TENSOR, _TENSOR],
    "gemm_tma_bk128_co": [_TENSOR, _TENSOR, _TENSOR],
    "pad_co": [_TENSOR, _TENSOR, _TENSOR],
    "host_elements_co": [_TENSOR],
    "wgmma_cr_co": [_TENSOR, _TENSOR, _TENSOR],
    "wgmma_cc_co": [_TENSOR, _TENSOR, _TENSOR],
    "device_call_co": [_TENSOR] * 4,
    "device_call_address_co": [_TENSOR] * 2,
    "device_call_cok_co": [_TENSOR] * 2,
    "device_call_acc_co": [_TENSOR] * 3,
    "tma_subbyte_co": [_TENSOR] * 3,
    "host_steps_co": [_TENSOR, _INDEX, _INDEX],
    "host_while_co": [_TENSOR, _INDEX, _RESULT_INDEX],
    "half_scalars_co": [_TENSOR, _TENSOR, _F32, _F32],
    "device_call_tile_co": [_TENSOR] * 2,
    "local_events_co": [_TENSOR] * 2,
    "asm_co": [_TENSOR] * 4,
    "mma_bf16_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_tf32_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_s8_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_u8_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_frag_array_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_frag_pick_co": [_TENSOR, _TENSOR, _TENSOR, _INDEX],
    "mma_frag_decl_co": [_TENSOR, _TENSOR, _TENSOR],
    "wgmma_u8_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_small_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_k8_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_tf32_co": [_TENSOR, _TENSOR, _TENSOR],
    "gemm_s8_co": [_TENSOR, _TENSOR, _TENSOR],
    "mma_loadc_co": [_TENSOR, _TENSOR, _TENSOR, _F32],
    "grid_sync_co": [_TENSOR, _TENSOR],
    "named_barrier_co": [_TENSOR, _TENSOR],
    "role_guard_co": [_TENSOR, _TENSOR, _INDEX],
    "events_2d_co": [_TENSOR] * 2,
    "divmod_epilogue_co": [_TENSOR] * 2,
    "bitonic_sort_co": [_TENSOR],
    "transpose_in_place_co": [_TENSOR],
    "blelloch_scan_co": [_TENSOR] * 2,
    "odd_even_sort_co": [_TENSOR],
    "halving_sum_co": [_TENSOR] * 2,
    "conv1x1_span_as_co": [_TENSOR] * 3,
    "span_as_rows_co": [_TENSOR] * 4,
    "f8_ops_co": [_TENSOR] * 4,
    "subbyte_co": [_TENSOR] * 16,
    "bits_co": [_TENSOR] * 2,
    "narrow_ops_co": [_TENSOR] * 8,
    "partial_copy_co": [_TENSOR] * 4,
    "pad_async_co": [_TENSOR] * 2,
}


class Kernels:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)

    def __getattr__(self, name):
        kinds = SIGNATURES[name]
        fn = getattr(self.lib, name)
        fn.restype = ctypes.c_int

        def call(*args):
            inputs = [k for k in kinds if k != _RESULT_INDEX]
            assert len(args) == len(inputs), name
            results = [ctypes.c_int64(-12345) for k in kinds if k == _RESULT_INDEX]
            cargs = []
            for kind, arg in zip(inputs, args):
                if kind == _TENSOR:
                    assert arg.is_cuda and arg.is_contiguous()
                    cargs.append(ctypes.c_void_p(arg.data_ptr()))
                    cargs.extend(ctypes.c_int64(d) for d in arg.shape)
                elif kind == _INDEX:
                    cargs.append(ctypes.c_int64(arg))
                elif kind == _F32:
                    cargs.append(ctypes.c_float(arg))
                else:
                    cargs.append(ctypes.c_void_p(arg.cuda_stream))
            cargs.extend(ctypes.byref(r) for r in results)
            rc = fn(*cargs)
            if rc != 0:
                raise RuntimeError(f"{name} returned {rc}")
            if results:
                return results[0].value if len(results) == 1 else [r.value for r in results]

        return call
