// croq_rt_f16_bits and croq_rt_bf16_bits, which round the f16 and bf16
// scalar arguments of host entry points, against the compiler's own
// correctly rounded conversions, over every 61st float bit pattern (zeros,
// subnormals, ties, overflow and NaN among them). A NaN must stay a NaN.
#include "croq_runtime.h"

#include <cmath>
#include <cstdio>
#include <cstring>

int main() {
  long badF16 = 0, badBF16 = 0, count = 0;
  for (uint64_t i = 0; i < (1ull << 32); i += 61, ++count) {
    uint32_t u = static_cast<uint32_t>(i);
    float x;
    memcpy(&x, &u, sizeof x);
    _Float16 h = static_cast<_Float16>(x);
    __bf16 b = static_cast<__bf16>(x);
    uint16_t wantF16, wantBF16;
    memcpy(&wantF16, &h, 2);
    memcpy(&wantBF16, &b, 2);
    uint16_t gotF16 = croq_rt_f16_bits(x), gotBF16 = croq_rt_bf16_bits(x);
    bool nan = std::isnan(x);
    bool okF16 = nan ? (gotF16 & 0x7c00) == 0x7c00 && (gotF16 & 0x3ff)
                     : gotF16 == wantF16;
    bool okBF16 = nan ? (gotBF16 & 0x7f80) == 0x7f80 && (gotBF16 & 0x7f)
                      : gotBF16 == wantBF16;
    if (!okF16 && badF16++ < 5)
      printf("f16 of %08x: %04x, expected %04x\n", u, gotF16, wantF16);
    if (!okBF16 && badBF16++ < 5)
      printf("bf16 of %08x: %04x, expected %04x\n", u, gotBF16, wantBF16);
  }
  printf("%ld values: %ld f16 mismatches, %ld bf16 mismatches\n", count,
         badF16, badBF16);
  return badF16 || badBF16;
}
