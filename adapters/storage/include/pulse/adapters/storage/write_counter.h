// WriteCounter: the number behind a store's WriteGeneration (the ports' cache hook). A write
// method opens a WriteCounter::Scope first; the count goes up when the scope closes, after the
// method's commit (or rollback), whether it succeeded or not. So a reading taken before a
// write's commit always differs from one taken after the write returned: a cache that reads
// the generation before its store read and serves only while the generation is unchanged never
// serves data older than a write that has returned.
// Thread-safety: safe from any thread (one atomic).
#pragma once

#include <atomic>
#include <cstdint>

namespace pulse::adapters::storage {

class WriteCounter {
 public:
  class Scope {
   public:
    explicit Scope(WriteCounter& counter) : counter_(counter) {}
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() { counter_.count_.fetch_add(1, std::memory_order_acq_rel); }

   private:
    WriteCounter& counter_;
  };

  [[nodiscard]] std::uint64_t Read() const { return count_.load(std::memory_order_acquire); }

 private:
  std::atomic<std::uint64_t> count_{0};
};

}  // namespace pulse::adapters::storage
