// runtime_single_chip_test.cc: the runtime functions of families A, B, W, Z
// on one core of one chip (tpu-kernel-api-current.md §3, §5 items 7, 18, 19),
// the static-memory address, the FP8 refusals and the convolution-weight
// sizes of tpu-kernel-tier3.md §1.1, on both chips. Expected values are the
// spec's, written here by hand.
#include <cstring>
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "support/run_body.h"
#include "common.h"
#include "tpu_kernel.h"

namespace {

using test::run_kernel_body;
bool run(std::function<void()> body) { return run_kernel_body(std::move(body)); }
nlohmann::json stats() { return test::last_run_stats(); }

class RuntimeSingleChip : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }
  bool is_1684x() const { return std::string(GetParam()) == "bm1684x"; }
  // Runs a kernel expected to stop; returns its error message.
  std::string failure(std::function<void()> body) {
    EXPECT_FALSE(run(std::move(body)));
    return cmodel_last_error();
  }
};

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

// §5 item 19: one work item of one group on one chip; no descriptor mode.
TEST_P(RuntimeSingleChip, SingleChipDefaults) {
  ASSERT_TRUE(run([] {
    EXPECT_EQ(tpu_workitem_num(), 1);
    EXPECT_EQ(tpu_workitem_index(), 0);
    EXPECT_EQ(tpu_group_num(), 1);
    EXPECT_EQ(tpu_group_index(), 0);
    EXPECT_EQ(tpu_is_last_workitem(), 1);
    EXPECT_EQ(tpu_chip_num(), 1);
    EXPECT_EQ(tpu_chip_id(), 0);
    EXPECT_EQ(tpu_rank(), 0);
    ASSERT_NE(tpu_chip_map(), nullptr);
    EXPECT_EQ(tpu_chip_map()[0], 0);
    EXPECT_EQ(tpu_use_ring(), 0);
    EXPECT_FALSE(tpu_is_cdma_busy());
    EXPECT_EQ(tpu_cdma_get_used_port_num(), 0);
    EXPECT_NE(tpu_cdma_get_used_ports(), nullptr);
    EXPECT_FALSE(tpu_is_descriptor_mode());
    EXPECT_EQ(tpu_engine_num(), 3u);
    EXPECT_EQ(tpu_start_physical_core_id(), 0);
    EXPECT_EQ(tpu_physical_core_id(), 0);
    EXPECT_EQ(tpu_tpuv7_env(), 0);
  })) << cmodel_last_error();
  int cores = 0;
  ASSERT_TRUE(run([&] { cores = tpu_physical_core_num(); }));
  EXPECT_EQ(cores, is_1684x() ? 1 : 2);  // main spec §1: TPU cores per chip
}

// torch-tpu's kernel entry: tpu_poll_descriptor() in place of
// tpu_initialize; it waits for everything issued before, as tpu_poll does.
TEST_P(RuntimeSingleChip, PollDescriptorIsACompletedPoll) {
  const uint64_t buf = cmodel_global_alloc(4096);
  ASSERT_TRUE(run([&] {
    tpu_poll_descriptor();  // at entry: nothing outstanding, nothing happens
    const dim4 shape{1, 1, 1, 256};
    tpu_parallel_start();
    tpu_gdma_cpy_S2S(buf + 2048, buf, &shape, nullptr, nullptr, DT_FP32);
    tpu_poll_descriptor();  // inside a region: still just a wait
    tpu_parallel_end();
    tpu_poll_descriptor();
    EXPECT_EQ(tpu_gdma_busy(), 0);
    EXPECT_EQ(tpu_bdc_busy(), 0);
    EXPECT_EQ(tpu_sdma_busy(), 0);
    EXPECT_EQ(tpu_hau_sort_busy(), 0);
    EXPECT_EQ(tpu_gdma_cmd_overflow(), 0);
    EXPECT_EQ(tpu_sdma_cmd_overflow(), 0);
    EXPECT_EQ(tpu_hau_sort_cmd_overflow(), 0);
  })) << cmodel_last_error();
  const auto s = stats();
  EXPECT_EQ(s["engines"]["gdma"]["commands"], 1);
  // The run lasts exactly as long as its one command: the polls added nothing.
  EXPECT_DOUBLE_EQ(s["total_us"].get<double>(), s["engines"]["gdma"]["busy_us"].get<double>());
}

TEST_P(RuntimeSingleChip, PollEmptyIsRefusedInsideAParallelRegion) {
  ASSERT_TRUE(run([] { tpu_poll_empty(); }));
  const std::string e = failure([] {
    tpu_parallel_start();
    tpu_poll_empty();
  });
  EXPECT_HAS(e, "tpu_poll_empty: a parallel region is open");
  EXPECT_HAS(e, "[illegal command]");
}

// One no-op on each of BDC, GDMA and SDMA: command ids advance.
TEST_P(RuntimeSingleChip, NopIssuesOneCommandPerEngine) {
  CMD_ID_NODE before{}, after{};
  ASSERT_TRUE(run([&] {
    tpu_get_id_node(&before);
    tpu_nop();
    tpu_nop();
    tpu_get_id_node(&after);
  })) << cmodel_last_error();
  EXPECT_EQ(after.bd_cmd_id - before.bd_cmd_id, 2u);
  EXPECT_EQ(after.gdma_cmd_id - before.gdma_cmd_id, 2u);
  const auto s = stats();
  for (const char *engine : {"gdma", "bdc", "sdma"}) EXPECT_EQ(s["engines"][engine]["commands"], 2) << engine;
  EXPECT_EQ(s["commands"]["tpu_nop"], 6);
}

TEST_P(RuntimeSingleChip, SetCommandIdsOverwriteTheCounters) {
  CMD_ID_NODE node{};
  ASSERT_TRUE(run([&] {
    tpu_nop();
    tpu_set_gdma_id(100);
    tpu_set_bd_id(7);
    tpu_nop();
    tpu_get_id_node(&node);
  })) << cmodel_last_error();
  EXPECT_EQ(node.gdma_cmd_id, 101u);
  EXPECT_EQ(node.bd_cmd_id, 8u);
  EXPECT_HAS(failure([] { tpu_set_gdma_id(-1); }), "tpu_set_gdma_id: gdma_id = -1; command ids are not negative");
  EXPECT_HAS(failure([] { tpu_set_bd_id(-3); }), "tpu_set_bd_id: bdc_id = -3");
}

TEST_P(RuntimeSingleChip, DescriptorModeAndRawCommandsAreRefused) {
  const std::string e = failure([] {
    tpu_engine_command_info_t info{0, 1, 0, 64};
    tpu_run_commands(&info, 1);
  });
  EXPECT_HAS(e, "tpu_run_commands: this emulator has no descriptor mode");
  EXPECT_HAS(e, "[unsupported]");
  EXPECT_HAS(failure([] {
               u64 cmd[4] = {};
               tpu_debug_cmd(cmd, 4, 0);
             }),
             "tpu_debug_cmd: this emulator has no raw engine commands");
}

TEST_P(RuntimeSingleChip, NoOpControlFunctionsRun) {
  ASSERT_TRUE(run([] {
    tpu_sr_setup();
    tpu_bdc_end();
    tpu_enable_pmu();
    tpu_disable_pmu();
    tpu_cdma_initialize();
    tpu_cdma_poll();
    tpu_cdma_all_port_nop();
    enable_bw_perf();
    disable_bw_perf(1000.0);
  })) << cmodel_last_error();
  EXPECT_EQ(stats()["total_us"], 0.0);
}

// ---- static memory ---------------------------------------------------------------
// Main spec §1: bm1684x 0x0900_0000 (debugger map); bm1688 selects static
// memory with bit 23 of a local-space address.
TEST_P(RuntimeSingleChip, StaticMemoryStart) {
  unsigned long long start = 0, macro = 0;
  ASSERT_TRUE(run([&] {
    start = tpu_static_mem_get_start_addr();
    macro = STATIC_MEM_START_ADDR;
  }));
  EXPECT_EQ(start, is_1684x() ? 0x09000000ull : 0x00800000ull);
  EXPECT_EQ(macro, start);
}

// The tables can be named by offset or by STATIC_MEM_START_ADDR + offset:
// both give the same bytes.
TEST_P(RuntimeSingleChip, StaticCopiesTakeAnAddressOrAnOffset) {
  const int npu = is_1684x() ? 64 : 32;
  const uint64_t out = cmodel_global_alloc(2 * 4 * 16 * uint64_t(npu));
  ASSERT_TRUE(run([&] {
    const uint32_t start = uint32_t(tpu_static_mem_get_start_addr());
    tpu_bdc_npu_bcast_from_static(0, 1024, npu, 16, DT_FP32);
    tpu_bdc_npu_bcast_from_static(4096, start + 1024, npu, 16, DT_FP32);
    const dim4 shape{1, npu, 1, 16};
    tpu_gdma_cpy_L2S(out, 0, &shape, nullptr, nullptr, DT_FP32);
    tpu_gdma_cpy_L2S(out + 4 * 16 * uint64_t(npu), 4096, &shape, nullptr, nullptr, DT_FP32);
  })) << cmodel_last_error();
  std::vector<uint8_t> host(2 * 4 * 16 * size_t(npu));
  ASSERT_EQ(cmodel_global_read(host.data(), out, host.size()), 0);
  EXPECT_EQ(std::memcmp(host.data(), host.data() + host.size() / 2, host.size() / 2), 0);
  // Past the end, in the absolute form: the message names the window.
  const std::string e = failure([&] {
    tpu_bdc_npu_distribute_from_static(0, uint32_t(tpu_static_mem_get_start_addr()) + 0x10000 - 8, 4, DT_FP32);
  });
  EXPECT_HAS(e, "is outside the static memory of 65536 bytes (64 KiB) at [" +
                    std::string(is_1684x() ? "0x9000000" : "0x800000") +
                    ", " + (is_1684x() ? "0x9010000" : "0x810000") + ")");
}

// ---- base addresses --------------------------------------------------------------
TEST_P(RuntimeSingleChip, GlobalAddressTranslation) {
  uint64_t plain = 0, tagged = 0;
  ASSERT_TRUE(run([&] {
    plain = tpu_global_mem_real_addr(0x100001000ull);
    const int idx[] = {2};
    const u64 base[] = {0x180000000ull};
    tpu_set_base_addr(idx, base, 1);
    // bit 39 = tagged, tag 2 (activation) in bits 36..38, offset 0x1234
    tagged = tpu_global_mem_real_addr((1ull << 39) | (2ull << 36) | 0x1234);
  })) << cmodel_last_error();
  EXPECT_EQ(plain, 0x100001000ull);
  EXPECT_EQ(tagged, 0x180001234ull);
  const std::string e = failure([] {
    const int idx[] = {2};
    const u64 base[] = {0x180000000ull};
    tpu_set_base_addr(idx, base, 1);
    tpu_reset_base_addr();
    tpu_global_mem_real_addr((1ull << 39) | (2ull << 36));
  });
  EXPECT_HAS(e, "tpu_global_mem_real_addr: 0xa000000000 is a tagged global address (tag 2)");
  EXPECT_HAS(failure([] {
               const int idx[] = {8};
               const u64 base[] = {0};
               tpu_set_base_addr(idx, base, 1);
             }),
             "tpu_set_base_addr: base_idx[0] = 8; registers are 0 .. 7");
  EXPECT_HAS(failure([] { tpu_set_base_addr(nullptr, nullptr, 1); }), "tpu_set_base_addr: base_idx is a null pointer");
}

// ---- synchronisation and message ids -----------------------------------------------
TEST_P(RuntimeSingleChip, SyncStateAndBarriers) {
  ASSERT_TRUE(run([] {
    EXPECT_FALSE(tpu_is_sync_state());
    tpu_sync_start();
    EXPECT_TRUE(tpu_is_sync_state());
    tpu_sync_end();
    EXPECT_FALSE(tpu_is_sync_state());
    tpu_sync_all_with_msg_id(3);
    tpu_sync_all_bdc();
    tpu_sync_all_gdma();
    tpu_sync_all_sdma();
    tpu_sync_all_hau();
    tpu_sync_core_innner();
    tpu_sync_core_with_external_engine();
    EXPECT_EQ(tpu_core_barrier(5, 1), 0);
  })) << cmodel_last_error();
  EXPECT_HAS(failure([] { tpu_core_barrier(5, 2); }),
             "tpu_core_barrier: core_num = 2; this kernel runs alone on core 0 of a launch group of 1");
}

TEST_P(RuntimeSingleChip, MessageIds) {
  ASSERT_TRUE(run([] {
    EXPECT_EQ(tpu_get_base_msg_id(), 0);
    tpu_set_base_msg_id(16);
    EXPECT_EQ(tpu_get_base_msg_id(), 16);
    // Four reserved ids at the base, then fresh ones.
    EXPECT_EQ(tpu_get_local_msg_id(), 16);
    EXPECT_EQ(tpu_get_global_msg_id(), 17);
    EXPECT_EQ(tpu_get_ccl_msg_id(), 18);
    EXPECT_EQ(tpu_get_schedule_msg_id(), 19);
    EXPECT_EQ(tpu_next_msg_id(), 20);
    EXPECT_EQ(tpu_next_msg_id(), 21);
    tpu_sync_start();
    tpu_sync_finish();  // everything back to zero
    EXPECT_EQ(tpu_get_base_msg_id(), 0);
    EXPECT_EQ(tpu_next_msg_id(), 4);
    EXPECT_FALSE(tpu_is_sync_state());
    tpu_core_context_setup(0, 1, 32);
    EXPECT_EQ(tpu_get_base_msg_id(), 32);
  })) << cmodel_last_error();
  // A new run starts clean.
  ASSERT_TRUE(run([] { EXPECT_EQ(tpu_get_base_msg_id(), 0); }));
  EXPECT_HAS(failure([] { tpu_core_context_setup(1, 2, 0); }),
             "tpu_core_context_setup: core_idx = 1, core_num = 2; this kernel runs on core 0 of a launch group of 1 "
             "on the emulator");
  EXPECT_HAS(failure([] { tpu_set_base_msg_id(-1); }), "tpu_set_base_msg_id: base_msg_id = -1");
}

// ---- several chips -------------------------------------------------------------------
TEST_P(RuntimeSingleChip, MultiChipTransfersNeedSeveralChips) {
  const std::string e = failure([] { tpu_cdma_send(1, 0, 0x100000000ull, 1, 1, 1, 16, 16, 16, 16, 0, DT_FP32); });
  EXPECT_HAS(e, "tpu_cdma_send: a chip-to-chip send needs several chips; this emulator is one chip");
  EXPECT_HAS(e, "[unsupported]");
  EXPECT_HAS(failure([] { tpu_cdma_recv(1, 0, 0x100000000ull, 1, 1, 1, 16, 16, 16, 16, 0, 0, DT_FP32); }),
             "tpu_cdma_recv: a chip-to-chip receive needs several chips");
  int map[] = {0};
  ASSERT_TRUE(run([&] { tpu_sccl_init(1, 0, map, 0); })) << cmodel_last_error();
  EXPECT_HAS(failure([] { tpu_sccl_init(2, 1, nullptr, 1); }),
             "tpu_sccl_init: chip_num = 2, rank = 1; this emulator is one chip");
}

TEST_P(RuntimeSingleChip, BandwidthMonitorHasNoCounters) {
  bw_info_t info;
  std::memset(&info, 0xab, sizeof info);
  ASSERT_TRUE(run([&] { read_bw_registers(&info); }));
  EXPECT_EQ(info.clk, 0u);
  EXPECT_EQ(info.read_cnt, 0u);
  EXPECT_EQ(info.write_cnt, 0u);
  EXPECT_EQ(info.write_bytes, 0u);
  EXPECT_HAS(failure([] { read_bw_registers(nullptr); }), "read_bw_registers: info is a null pointer");
  testing::internal::CaptureStdout();
  ASSERT_TRUE(run([] { show_bw_info(1000.0); }));
  EXPECT_HAS(testing::internal::GetCapturedStdout(), "no counters in the emulator");
}

// ---- FP8 (§5 item 18) ----------------------------------------------------------------
TEST_P(RuntimeSingleChip, Fp8InstructionsAreUnsupported) {
  const std::string chip = GetParam();
  const dim4 shape{1, 1, 1, 8};
  scalar_t C{};
  var_context_t none{};
  const std::string add = failure([&] {
    tpu_bdc_fp8_add_C(0, 256, C, &shape, nullptr, nullptr, DT_FP16, DT_FP8E4M3, DT_FP16, 0);
  });
  EXPECT_HAS(add, "tpu_bdc_fp8_add_C: src dtype DT_FP8E4M3 is not supported on " + chip);
  EXPECT_HAS(add, "[unsupported]");
  EXPECT_HAS(failure([&] { tpu_bdc_fp8_C_sub(0, 256, C, &shape, nullptr, nullptr, DT_FP8E5M2, DT_FP16, DT_FP16, 0); }),
             "tpu_bdc_fp8_C_sub: dst dtype DT_FP8E5M2 is not supported on " + chip);
  EXPECT_HAS(failure([&] { tpu_bdc_fp8_mul_C(0, 256, C, &shape, nullptr, nullptr, DT_FP16, DT_FP16, DT_FP16, 0); }),
             "tpu_bdc_fp8_mul_C: FP8 instructions are not supported on " + chip);
  EXPECT_HAS(failure([&] {
               tpu_bdc_fp8_mm(0, 256, 512, 1, 1, 1, DT_FP32, DT_FP8E4M3, DT_FP8E4M3, false, false, false, none);
             }),
             "tpu_bdc_fp8_mm: left dtype DT_FP8E4M3 is not supported on " + chip);
  EXPECT_HAS(failure([&] {
               tpu_bdc_fp8_mm_R_trans(0, 256, 512, 1, 1, 1, DT_FP32, DT_FP16, DT_FP8E5M2, false, false, false, none);
             }),
             "tpu_bdc_fp8_mm_R_trans: right dtype DT_FP8E5M2 is not supported on " + chip);
  EXPECT_HAS(failure([&] {
               tpu_bdc_fp8_mm_all_trans(0, 256, 512, 1, 1, 1, DT_FP32, DT_FP8E5M2, DT_FP8E5M2, false, false, false,
                                        none);
             }),
             "tpu_bdc_fp8_mm_all_trans: left dtype DT_FP8E5M2");
  EXPECT_HAS(failure([&] {
               tpu_bdc_fp8_mm_with_bias(0, 256, 512, 1, 1, 1, DT_FP32, DT_FP8E4M3, DT_FP8E4M3, DT_FP32, false, true,
                                        none, false, false, false, none);
             }),
             "tpu_bdc_fp8_mm_with_bias: left dtype DT_FP8E4M3 is not supported on " + chip);
  EXPECT_HAS(failure([&] {
               tpu_bdc_fp8_mm_R_trans_with_bias(0, 256, 512, 1, 1, 1, DT_FP32, DT_FP8E4M3, DT_FP8E4M3, DT_FP32, false,
                                                true, none, false, false, false, none);
             }),
             "tpu_bdc_fp8_mm_R_trans_with_bias: left dtype");
  EXPECT_HAS(failure([&] {
               tpu_bdc_fp8_mm_all_trans_with_bias(0, 256, 512, 1, 1, 1, DT_FP32, DT_FP8E4M3, DT_FP8E4M3, DT_FP32,
                                                  false, true, none, false, false, false, none);
             }),
             "tpu_bdc_fp8_mm_all_trans_with_bias: left dtype");
  EXPECT_HAS(failure([&] {
               const dim4 in{1, 1, 4, 4};
               const dim2 k{2, 2}, st{2, 2}, dl{1, 1};
               const padding_t pad{0, 0, 0, 0};
               tpu_bdc_fp8_avg_pool2d(0, 256, &in, &k, &pad, &st, &dl, DT_FP8E4M3, DT_FP16, C, 1.0f);
             }),
             "tpu_bdc_fp8_avg_pool2d: input dtype DT_FP8E4M3 is not supported on " + chip);
}

// ---- convolution weight sizes (tier-3 spec §1.1) --------------------------------------
// P(t): bm1684x 1 / 32 / 64 / 128 and bm1688 1 / 16 / 32 / 64 for 32 / 16 / 8 / 4-bit types.
TEST_P(RuntimeSingleChip, ConvKernelSizes) {
  const bool x = is_1684x();
  ASSERT_TRUE(run([&] {
    EXPECT_EQ(tpu_get_ic_parallel(DT_FP32), 1);
    EXPECT_EQ(tpu_get_ic_parallel(DT_UINT32), 1);
    EXPECT_EQ(tpu_get_ic_parallel(DT_FP16), x ? 32 : 16);
    EXPECT_EQ(tpu_get_ic_parallel(DT_BFP16), x ? 32 : 16);
    EXPECT_EQ(tpu_get_ic_parallel(DT_INT16), x ? 32 : 16);
    EXPECT_EQ(tpu_get_ic_parallel(DT_INT8), x ? 64 : 32);
    EXPECT_EQ(tpu_get_ic_parallel(DT_UINT8), x ? 64 : 32);
    EXPECT_EQ(tpu_get_ic_parallel(DT_INT4), x ? 128 : 64);
    const dim2 k3{3, 3}, k1{1, 1}, k23{2, 3};
    // FP16, ic 3 -> ALIGN(3, P) = P; P * 9 elements * 2 bytes
    EXPECT_EQ(tpu_conv_kernel_size_per_oc(3, &k3, DT_FP16), x ? 32 * 9 * 2 : 16 * 9 * 2);
    // oc 100 over 64 / 32 lanes: 2 / 4 rows
    EXPECT_EQ(tpu_conv_kernel_size(100, 3, &k3, DT_FP16), x ? 2 * 576 : 4 * 288);
    // INT8, ic 70: ALIGN(70, 64) = 128, ALIGN(70, 32) = 96
    EXPECT_EQ(tpu_conv_kernel_size_per_oc(70, &k1, DT_INT8), x ? 128 : 96);
    // FP32 needs no alignment: 5 * 6 * 4 bytes; oc 65 -> 2 / 3 rows
    EXPECT_EQ(tpu_conv_kernel_size_per_oc(5, &k23, DT_FP32), 120);
    EXPECT_EQ(tpu_conv_kernel_size(65, 5, &k23, DT_FP32), x ? 240 : 360);
    // INT4: ALIGN(3, P) * 4 bits
    EXPECT_EQ(tpu_conv_kernel_size_per_oc(3, &k1, DT_INT4), x ? 64 : 32);
    EXPECT_EQ(tpu_conv_kernel_size(1, 3, &k1, DT_INT4), x ? 64 : 32);
  })) << cmodel_last_error();
  EXPECT_HAS(failure([] { tpu_get_ic_parallel(DT_FP8E4M3); }),
             std::string("tpu_get_ic_parallel: dtype DT_FP8E4M3 is not supported on ") + GetParam());
  EXPECT_HAS(failure([] { tpu_conv_kernel_size_per_oc(3, nullptr, DT_FP16); }),
             "tpu_conv_kernel_size_per_oc: ker is a null pointer");
  EXPECT_HAS(failure([] {
               const dim2 k{1, 1};
               tpu_conv_kernel_size(0, 3, &k, DT_FP16);
             }),
             "tpu_conv_kernel_size: oc = 0; must be positive");
}

INSTANTIATE_TEST_SUITE_P(Chips, RuntimeSingleChip, ::testing::Values("bm1684x", "bm1688"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
