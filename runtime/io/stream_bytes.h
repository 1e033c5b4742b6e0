// stream_bytes.h (private): the rest of an input stream as bytes, read in
// blocks of 1 MiB. A byte-at-a-time istreambuf_iterator was most of a small
// op's run time when it read each library before loading it; and a size
// taken first could be stale under a concurrent writer, so this reads to
// the end as it is now. The caller checks in.bad() for a read error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <vector>

namespace tpu_runtime::detail {

inline std::vector<uint8_t> read_stream_bytes(std::istream &in) {
  constexpr std::size_t kBlock = std::size_t(1) << 20;
  std::vector<uint8_t> bytes;
  while (in) {
    const std::size_t used = bytes.size();
    bytes.resize(used + kBlock);
    in.read(reinterpret_cast<char *>(bytes.data() + used), std::streamsize(kBlock));
    bytes.resize(used + std::size_t(in.gcount()));
  }
  return bytes;
}

}  // namespace tpu_runtime::detail
