// The db_bench-style driver shared by the C/C++ peer harnesses written for Strata's
// benchmarks (bench/kyoto_bench.cc, bench/lmdb_bench.cc; bench/leveldb_bench.cc and
// bench/rocksdb_bench.cc keep their own copy of the db_bench workloads and use this file for
// RucksDB's suite): the same workloads, flags, key format (%016ld), value generator
// (compressible 100-byte pieces, ratio 0.5), random seeds (Park-Miller, 301 for values and
// 1000+thread for keys) and output lines as `strata bench`, so engines compare workload by
// workload in one run. An engine implements `Store`; a workload it cannot express prints
// nothing (bench/db_bench.sh shows "-").
//
// RucksDB's suite (bench/rucksdb.sh; drmingdrmer/rucksdb's benches/basic_ops.rs and
// benches/concurrent.rs): RunRucks below, mirrored name for name and field for field by
// src/bin/strata/bench/rucks.rs. Each of its workloads opens a fresh database, does its
// untimed set-up, times its operations, then checks its own results and exits 1 when they
// are wrong (a get that should find a key and does not, a value that differs from what was
// written, a missing key found, no table where one must be, no flush where one must run).

#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace harness {

struct Random {  // LevelDB util/random.h
  uint32_t seed;
  explicit Random(uint32_t s) : seed(s & 0x7fffffffu) {
    if (seed == 0 || seed == 2147483647L) seed = 1;
  }
  uint32_t Next() {
    const uint32_t M = 2147483647L;
    const uint64_t A = 16807;
    uint64_t product = seed * A;
    seed = static_cast<uint32_t>((product >> 31) + (product & M));
    if (seed > M) seed -= M;
    return seed;
  }
  uint32_t Uniform(int n) { return Next() % n; }
};

// The values' bytes are made at the first Generate (LevelDB's db_bench makes its generator in
// DoWrite): a workload that writes nothing does not time making 1 MiB of them.
struct ValueGen {
  std::string data;
  size_t pos = 0;
  double ratio;
  explicit ValueGen(double ratio) : ratio(ratio) {}
  void Fill() {
    Random rnd(301);
    while (data.size() < (1u << 20)) {
      int raw = static_cast<int>(100 * ratio);
      if (raw < 1) raw = 1;
      std::string piece;
      for (int i = 0; i < raw; i++) piece.push_back(static_cast<char>(' ' + rnd.Uniform(95)));
      for (int i = 0; i < 100; i++) data.push_back(piece[i % raw]);
    }
  }
  std::string_view Generate(size_t len) {
    if (data.empty()) Fill();
    if (len > data.size()) {  // fill100K: repeat the generator's bytes
      while (data.size() < len) data += data.substr(0, len - data.size());
    }
    if (pos + len > data.size()) pos = 0;
    pos += len;
    return std::string_view(data.data() + pos - len, len);
  }
};

struct Flags {
  std::string benchmarks = "fillseq,fillrandom,overwrite,readrandom,readseq";
  long num = 1000000, reads = -1, value_size = 100, cache_size = -1, bloom_bits = -1;
  long write_buffer_size = 0, max_file_size = 0, threads = 1;
  double compression_ratio = 0.5;
  std::string db = "/tmp/harness-dbbench", compression = "snappy";
  bool use_existing_db = false, json = false;
  bool histogram = false;  // --histogram=1: per-op latency for every RucksDB workload
};

inline std::string Key(long k) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%016ld", k);
  return buf;
}

using Batch = std::vector<std::pair<std::string, std::string_view>>;

/// One engine. Methods are called from `threads` threads at once for the threaded runs.
struct Store {
  virtual ~Store() = default;
  /// Opens the database (`fresh`: destroyed first; `bulk`: a bulk load follows).
  virtual void Open(bool fresh, bool bulk) = 0;
  virtual void Close() = 0;
  virtual void Put(const std::string& k, std::string_view v, bool sync) = 0;
  /// Writes `batch` at once (one transaction where the engine has them).
  virtual void Write(const Batch& batch, bool sync) = 0;
  virtual bool Get(const std::string& k, std::string* v) = 0;
  virtual void Delete(const std::string& k) = 0;
  /// Iterates up to `limit` entries forward or backward; returns entries, adds key+value bytes.
  virtual long Scan(bool forward, long limit, long* bytes) = 0;
  /// Seeks to the first key >= k; whether it is k.
  virtual bool SeekFinds(const std::string& k) = 0;
  /// Full compaction; false when the engine has none.
  virtual bool Compact() = 0;
  // For RucksDB's suite; the defaults say "this engine cannot tell".
  /// Whether a memtable flush or a compaction is scheduled or running (1 or 0; -1: unknown).
  /// Called before every put of writes_during_flush: it must be cheap (an atomic load).
  virtual int BackgroundBusy() { return -1; }
  /// Memtable flushes completed since the store was created (-1: unknown).
  virtual long Flushes() { return -1; }
  /// Live table files of the open database (-1: the engine has no tables).
  virtual long TableFiles() { return -1; }
};

struct Stats {
  long done = 0, bytes = 0, found = 0;
  std::string message;
  bool supported = true;
};

inline Stats RunOne(const Flags& f, const std::string& name, Store& db, int thread) {
  Random rnd(1000 + thread);
  ValueGen gen(f.compression_ratio);
  Stats st;
  long num = f.num, reads = f.reads < 0 ? f.num : f.reads;
  auto write = [&](bool seq, long n, long batch, long vsize, bool sync) {
    for (long i = 0; i < n; i += batch) {
      if (batch == 1) {
        std::string k = Key(seq ? i : rnd.Uniform(num));
        std::string_view v = gen.Generate(vsize);
        db.Put(k, v, sync);
        st.bytes += vsize + k.size();
        st.done++;
        continue;
      }
      Batch b;
      for (long j = 0; j < batch; j++) {
        b.emplace_back(Key(seq ? i + j : rnd.Uniform(num)), gen.Generate(vsize));
        st.bytes += vsize + 16;
        st.done++;
      }
      db.Write(b, sync);
    }
  };
  if (name == "fillseq") write(true, num, 1, f.value_size, false);
  else if (name == "fillrandom" || name == "overwrite") write(false, num, 1, f.value_size, false);
  else if (name == "fillbatch") write(true, num, 1000, f.value_size, false);
  else if (name == "fillsync") write(false, num / 1000, 1, f.value_size, true);
  else if (name == "fill100K") write(false, num / 1000, 1, 100000, false);
  else if (name == "bulkload_seq" || name == "bulkload_random") write(name == "bulkload_seq", num, 1000, f.value_size, false);
  else if (name == "readseq" || name == "readreverse") {
    st.done = db.Scan(name == "readseq", reads, &st.bytes);
  } else if (name == "readrandom" || name == "readmissing" || name == "readhot") {
    long range = name == "readhot" ? (num + 99) / 100 : num;
    std::string value;
    for (long i = 0; i < reads; i++) {
      std::string k = Key(rnd.Uniform(range));
      if (name == "readmissing") k.push_back('.');
      if (db.Get(k, &value)) st.found++;
      st.done++;
    }
    st.message = "(" + std::to_string(st.found) + " of " + std::to_string(reads) + " found)";
  } else if (name == "seekrandom") {
    for (long i = 0; i < reads; i++) {
      if (db.SeekFinds(Key(rnd.Uniform(num)))) st.found++;
      st.done++;
    }
    st.message = "(" + std::to_string(st.found) + " of " + std::to_string(reads) + " found)";
  } else if (name == "deleteseq" || name == "deleterandom") {
    for (long i = 0; i < num; i++) {
      db.Delete(Key(name == "deleteseq" ? i : rnd.Uniform(num)));
      st.done++;
    }
  } else if (name == "mixed") {
    std::string value;
    for (long i = 0; i < num; i++) {
      std::string k = Key(rnd.Uniform(num));
      if (i % 2 == 0) {
        if (db.Get(k, &value)) st.found++;
      } else {
        std::string_view v = gen.Generate(f.value_size);
        st.bytes += v.size() + k.size();
        db.Put(k, v, false);
      }
      st.done++;
    }
    st.message = "(" + std::to_string(st.found) + " of " + std::to_string((num + 1) / 2) + " reads found)";
  } else if (name == "compact") {
    if (thread == 0) {
      st.supported = db.Compact();
      st.done = 1;
    }
  } else {
    std::fprintf(stderr, "unknown benchmark %s\n", name.c_str());
    std::exit(2);
  }
  return st;
}

// ---------------------------------------------------------------------------------------
// RucksDB's suite. Workloads (N = --num; values from the generator above, 1 KB = 1,024 B):
//   put_100b, put_1kb, put_10kb  N, N/10, N/100 puts, sequential keys, values of 100 B,
//                       1 KB, 10 KB; checked: every key then reads back its value
//   get_memtable        1,000 keys of 1 KB written (no table may exist), then N gets of
//                       random ones; all must be found
//   get_sstable         N/10 keys of 1 KB written and compacted (tables must exist), then
//                       N gets of random ones; all must be found
//   get_not_found       the same database, then N gets of absent keys inside its key range
//                       (key + "."), so each table's bloom filter (--bloom_bits) answers;
//                       none may be found
//   delete              N keys of 100 B written, then all N deleted in order; a scan must
//                       find nothing
//   read_write_50_50    1,000 keys of 1 KB written, then N/4 operations alternating a get
//                       of a random key written so far (it must be found) and a put of a
//                       new key
//   concurrent_writes   --threads writers share N/10 puts of 1 KB (each its own key range);
//                       ops/s is the total
//   writes_during_flush a 1 MB write buffer (RucksDB's flush_impact), max(N/10, 4,096) puts
//                       of 1 KB, each timed: latency percentiles of every put and of the puts
//                       issued while a flush or compaction was scheduled or running, and the
//                       memtable flushes completed during the puts (at least one, where the
//                       engine can tell)
// Latency percentiles are nearest-rank over every timed op, in microseconds; recorded for
// writes_during_flush always, for the others with --histogram=1.
// ---------------------------------------------------------------------------------------

inline bool IsRucks(const std::string& n) {
  return n == "put_100b" || n == "put_1kb" || n == "put_10kb" || n == "get_memtable" || n == "get_sstable" ||
         n == "get_not_found" || n == "delete" || n == "read_write_50_50" || n == "concurrent_writes" ||
         n == "writes_during_flush";
}

/// Per-op latencies (nanoseconds), kept whole: percentiles are exact.
struct Latency {
  std::vector<uint64_t> ns;
  void Add(std::chrono::steady_clock::time_point t0) {
    ns.push_back(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()));
  }
  void Merge(const Latency& o) { ns.insert(ns.end(), o.ns.begin(), o.ns.end()); }
  /// Nearest rank: the smallest value with at least permille/1000 of the values at or below it.
  double Percentile(long permille) const {
    long n = static_cast<long>(ns.size());
    long rank = (n * permille + 999) / 1000;
    return ns[std::max(rank, 1L) - 1] / 1000.0;
  }
  void Sort() { std::sort(ns.begin(), ns.end()); }
  std::string Json() const {  // call Sort() first
    if (ns.empty()) return "null";
    double sum = 0;
    for (uint64_t v : ns) sum += v;
    char b[256];
    std::snprintf(b, sizeof(b), "{\"ops\":%zu,\"p50_us\":%.3f,\"p99_us\":%.3f,\"p999_us\":%.3f,\"max_us\":%.3f,\"mean_us\":%.3f}",
                  ns.size(), Percentile(500), Percentile(990), Percentile(999), ns.back() / 1000.0, sum / ns.size() / 1000.0);
    return b;
  }
  std::string Text() const {
    char b[160];
    std::snprintf(b, sizeof(b), "p50 %.3f us, p99 %.3f us, p99.9 %.3f us, max %.3f us", Percentile(500), Percentile(990),
                  Percentile(999), ns.back() / 1000.0);
    return b;
  }
};

[[noreturn]] inline void RucksFail(const std::string& name, const std::string& what) {
  std::fprintf(stderr, "%s: check failed: %s\n", name.c_str(), what.c_str());
  std::exit(1);
}

/// Writes keys first..first+n-1 in order with values of `vsize` from `gen` (untimed set-up).
inline void RucksFill(Store& db, ValueGen& gen, long first, long n, long vsize) {
  for (long i = 0; i < n; i++) db.Put(Key(first + i), gen.Generate(vsize), false);
}

/// Every key first..first+n-1 must read back the value a fresh generator gives in order.
inline void RucksVerify(const Flags& f, const std::string& name, Store& db, long first, long n, long vsize) {
  ValueGen gen(f.compression_ratio);
  std::string v;
  for (long i = 0; i < n; i++) {
    std::string_view want = gen.Generate(vsize);
    if (!db.Get(Key(first + i), &v)) RucksFail(name, "key " + Key(first + i) + " written but not found");
    if (v != want) RucksFail(name, "key " + Key(first + i) + " reads back a different value");
  }
}

inline long RucksCount(Store& db) {
  long bytes = 0;
  return db.Scan(true, LONG_MAX, &bytes);
}

/// Runs one workload of RucksDB's suite on a fresh database and prints its line.
inline void RunRucks(Flags& f, const std::string& name, Store& db) {
  using Clock = std::chrono::steady_clock;
  const long kKB = 1024, N = std::max(f.num, 1L);
  const bool hist = f.histogram || name == "writes_during_flush";
  long ops = 0, bytes = 0, found = 0, threads = 1, flushes = -1, busy_ops = -1;
  std::string message;
  Latency lat, busy_lat;
  ValueGen gen(f.compression_ratio);
  gen.Generate(0);  // its bytes made before any workload's clock starts, as before
  Random rnd(1000);
  std::string value;
  Clock::time_point start;
  double secs = 0;
  auto stop = [&] { secs = std::chrono::duration<double>(Clock::now() - start).count(); };
  long saved_buffer = f.write_buffer_size;
  if (name == "writes_during_flush") f.write_buffer_size = 1 << 20;
  db.Open(true, false);
  if (name == "put_100b" || name == "put_1kb" || name == "put_10kb") {
    long vsize = name == "put_100b" ? 100 : name == "put_1kb" ? kKB : 10 * kKB;
    ops = std::max(name == "put_100b" ? N : name == "put_1kb" ? N / 10 : N / 100, 1L);
    start = Clock::now();
    for (long i = 0; i < ops; i++) {
      std::string k = Key(i);
      std::string_view v = gen.Generate(vsize);
      auto t0 = Clock::now();
      db.Put(k, v, false);
      if (hist) lat.Add(t0);
      bytes += k.size() + vsize;
    }
    stop();
    RucksVerify(f, name, db, 0, ops, vsize);
    if (RucksCount(db) != ops) RucksFail(name, "a scan does not find exactly the keys written");
  } else if (name == "get_memtable" || name == "get_sstable" || name == "get_not_found") {
    long keys = name == "get_memtable" ? std::min(N, 1000L) : std::max(N / 10, 1L);
    bool missing = name == "get_not_found";
    RucksFill(db, gen, 0, keys, kKB);
    if (name == "get_memtable") {
      if (db.TableFiles() > 0) RucksFail(name, "a table was written: the keys are not all in the memtable");
    } else {
      db.Compact();
      if (db.TableFiles() == 0) RucksFail(name, "no table after the compaction");
    }
    ops = N;
    long wrong = 0;
    start = Clock::now();
    for (long i = 0; i < ops; i++) {
      std::string k = Key(rnd.Uniform(keys));
      if (missing) k.push_back('.');
      auto t0 = Clock::now();
      bool got = db.Get(k, &value);
      if (hist) lat.Add(t0);
      if (got) {
        found++;
        if (value.size() != static_cast<size_t>(kKB)) wrong++;
      }
    }
    stop();
    message = "(" + std::to_string(found) + " of " + std::to_string(ops) + " found)";
    if (missing && found != 0) RucksFail(name, "absent keys found " + message);
    if (!missing && found != ops) RucksFail(name, "keys written not found " + message);
    if (wrong) RucksFail(name, std::to_string(wrong) + " values of the wrong size");
    if (name == "get_memtable" && db.TableFiles() > 0) RucksFail(name, "a table was written during the gets");
    if (missing) {  // the keys that are there are still found
      if (!db.Get(Key(0), &value) || !db.Get(Key(keys - 1), &value)) RucksFail(name, "a key written is not found");
    } else {
      RucksVerify(f, name, db, 0, keys, kKB);
    }
  } else if (name == "delete") {
    ops = N;
    RucksFill(db, gen, 0, ops, 100);
    start = Clock::now();
    for (long i = 0; i < ops; i++) {
      std::string k = Key(i);
      auto t0 = Clock::now();
      db.Delete(k);
      if (hist) lat.Add(t0);
    }
    stop();
    if (RucksCount(db) != 0) RucksFail(name, "a scan still finds keys after every key was deleted");
    if (db.Get(Key(0), &value) || db.Get(Key(ops - 1), &value)) RucksFail(name, "a deleted key is found");
  } else if (name == "read_write_50_50") {
    long written = std::min(N, 1000L);
    RucksFill(db, gen, 0, written, kKB);
    ops = std::max(N / 4, 2L);
    long wrong = 0;
    start = Clock::now();
    for (long i = 0; i < ops; i++) {
      if (i % 2 == 0) {
        std::string k = Key(rnd.Uniform(written));
        auto t0 = Clock::now();
        bool got = db.Get(k, &value);
        if (hist) lat.Add(t0);
        if (got) {
          found++;
          if (value.size() != static_cast<size_t>(kKB)) wrong++;
        }
      } else {
        std::string k = Key(written++);
        std::string_view v = gen.Generate(kKB);
        auto t0 = Clock::now();
        db.Put(k, v, false);
        if (hist) lat.Add(t0);
        bytes += k.size() + kKB;
      }
    }
    stop();
    long reads = (ops + 1) / 2;
    message = "(" + std::to_string(found) + " of " + std::to_string(reads) + " reads found)";
    if (found != reads) RucksFail(name, "reads of keys written not found " + message);
    if (wrong) RucksFail(name, std::to_string(wrong) + " values of the wrong size");
    RucksVerify(f, name, db, 0, written, kKB);
  } else if (name == "concurrent_writes") {
    threads = std::max(f.threads, 1L);
    long per = std::max(N / 10 / threads, 1L);
    ops = per * threads;
    std::vector<Latency> lats(threads);
    std::vector<std::thread> ts;
    start = Clock::now();
    for (long t = 0; t < threads; t++) {
      ts.emplace_back([&, t] {
        ValueGen g(f.compression_ratio);
        for (long j = 0; j < per; j++) {
          std::string k = Key(t * per + j);
          std::string_view v = g.Generate(kKB);
          auto t0 = Clock::now();
          db.Put(k, v, false);
          if (hist) lats[t].Add(t0);
        }
      });
    }
    for (auto& t : ts) t.join();
    stop();
    for (auto& l : lats) lat.Merge(l);
    bytes = ops * (16 + kKB);
    for (long t = 0; t < threads; t++) RucksVerify(f, name, db, t * per, per, kKB);
    if (RucksCount(db) != ops) RucksFail(name, "a scan does not find exactly the keys written");
  } else if (name == "writes_during_flush") {
    ops = std::max(N / 10, 4096L);
    long flushes0 = db.Flushes();
    busy_ops = 0;
    bool known = db.BackgroundBusy() >= 0;
    start = Clock::now();
    for (long i = 0; i < ops; i++) {
      std::string k = Key(i);
      std::string_view v = gen.Generate(kKB);
      bool busy = db.BackgroundBusy() > 0;
      auto t0 = Clock::now();
      db.Put(k, v, false);
      lat.Add(t0);
      if (busy) {
        busy_lat.ns.push_back(lat.ns.back());
        busy_ops++;
      }
      bytes += k.size() + kKB;
    }
    stop();
    if (flushes0 >= 0) flushes = db.Flushes() - flushes0;
    if (!known) busy_ops = -1;
    if (flushes == 0) RucksFail(name, "no memtable flush completed while the puts ran");
    if (known && busy_ops == 0) RucksFail(name, "no put was issued while a flush or compaction ran");
    RucksVerify(f, name, db, 0, ops, kKB);
  }
  db.Close();
  f.write_buffer_size = saved_buffer;
  lat.Sort();
  busy_lat.Sort();
  double micros = secs * 1e6 / ops;
  double mbps = bytes / 1048576.0 / secs;
  auto num = [](long v) { return v < 0 ? std::string("null") : std::to_string(v); };
  if (f.json) {
    char mb[32] = "null";
    if (bytes > 0) std::snprintf(mb, sizeof(mb), "%.1f", mbps);
    std::printf("{\"benchmark\":\"%s\",\"micros_per_op\":%.3f,\"ops\":%ld,\"seconds\":%.6f,\"mb_per_s\":%s,\"found\":%ld,\"threads\":%ld,\"latency\":%s",
                name.c_str(), micros, ops, secs, mb, found, threads, lat.Json().c_str());
    if (name == "writes_during_flush")
      std::printf(",\"flushes\":%s,\"busy_ops\":%s,\"latency_busy\":%s", num(flushes).c_str(), num(busy_ops).c_str(),
                  busy_lat.Json().c_str());
    std::printf("}\n");
  } else {
    std::string extra;
    if (bytes > 0) { char b[32]; std::snprintf(b, sizeof(b), "%6.1f MB/s", mbps); extra = b; }
    if (!message.empty()) extra += (extra.empty() ? "" : " ") + message;
    if (!lat.ns.empty()) extra += (extra.empty() ? "(" : " (") + lat.Text() + ")";
    if (name == "writes_during_flush") {
      extra += " (" + num(flushes) + " flushes; " + num(busy_ops) + " of " + std::to_string(ops) +
               " puts during background work" + (busy_lat.ns.empty() ? "" : ": " + busy_lat.Text()) + ")";
    }
    std::printf("%-12s : %11.3f micros/op;%s%s\n", name.c_str(), micros, extra.empty() ? "" : " ", extra.c_str());
  }
  std::fflush(stdout);
}

/// Parses the flags, runs every benchmark of the list, prints a line (or JSON) per benchmark.
inline int Main(int argc, char** argv, Store& db, Flags& f) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto eq = a.find('=');
    std::string k = a.substr(0, eq), v = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (k == "--benchmarks") f.benchmarks = v;
    else if (k == "--num") f.num = std::atol(v.c_str());
    else if (k == "--reads") f.reads = std::atol(v.c_str());
    else if (k == "--value_size") f.value_size = std::atol(v.c_str());
    else if (k == "--cache_size") f.cache_size = std::atol(v.c_str());
    else if (k == "--bloom_bits") f.bloom_bits = std::atol(v.c_str());
    else if (k == "--write_buffer_size") f.write_buffer_size = std::atol(v.c_str());
    else if (k == "--max_file_size") f.max_file_size = std::atol(v.c_str());
    else if (k == "--threads") f.threads = std::atol(v.c_str());
    else if (k == "--compression_ratio") f.compression_ratio = std::atof(v.c_str());
    else if (k == "--db") f.db = v;
    else if (k == "--compression") f.compression = v;
    else if (k == "--use_existing_db") f.use_existing_db = v == "1";
    else if (k == "--json") f.json = true;
    else if (k == "--histogram") f.histogram = v == "1" || v == "true";
    else { std::fprintf(stderr, "unknown flag %s\n", a.c_str()); return 2; }
  }
  bool open = false;
  std::stringstream list(f.benchmarks);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (name.empty()) continue;
    if (IsRucks(name)) {  // opens a fresh database of its own
      if (f.use_existing_db) continue;
      if (open) db.Close();
      open = false;
      RunRucks(f, name, db);
      continue;
    }
    bool fresh = name.rfind("fill", 0) == 0 || name.rfind("bulkload", 0) == 0;
    if (fresh && f.use_existing_db) continue;
    if (name == "open") {
      // kvbench's open: the existing database opened and closed --reads times.
      if (open) db.Close();
      long n = f.reads < 0 ? f.num : f.reads;
      auto start = std::chrono::steady_clock::now();
      for (long i = 0; i < n; i++) {
        db.Open(false, false);
        db.Close();
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      db.Open(false, false);
      open = true;
      double micros = secs * 1e6 / (n > 0 ? n : 1);
      if (f.json) std::printf("{\"benchmark\":\"open\",\"micros_per_op\":%.3f,\"ops\":%ld,\"seconds\":%.6f,\"mb_per_s\":null,\"found\":0,\"threads\":1,\"latency\":null}\n", micros, n, secs);
      else std::printf("%-12s : %11.3f micros/op;\n", "open", micros);
      std::fflush(stdout);
      continue;
    }
    if (fresh || !open) {
      if (open) db.Close();
      db.Open(fresh || !f.use_existing_db, name.rfind("bulkload", 0) == 0);
      open = true;
    }
    auto start = std::chrono::steady_clock::now();
    std::vector<Stats> results(f.threads);
    std::vector<std::thread> ts;
    for (int t = 0; t < f.threads; t++) ts.emplace_back([&, t] { results[t] = RunOne(f, name, db, t); });
    for (auto& t : ts) t.join();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Stats total;
    for (auto& s : results) {
      total.done += s.done; total.bytes += s.bytes; total.found += s.found;
      total.supported = total.supported && s.supported;
      if (total.message.empty()) total.message = s.message;
    }
    if (!total.supported) continue;  // no counterpart: db_bench.sh shows "-"
    double micros = secs * 1e6 / (total.done > 0 ? total.done : 1);
    double mbps = total.bytes / 1048576.0 / secs;
    if (f.json) {
      std::printf("{\"benchmark\":\"%s\",\"micros_per_op\":%.3f,\"ops\":%ld,\"seconds\":%.6f,\"mb_per_s\":%s,\"found\":%ld,\"threads\":%ld,\"latency\":null}\n",
                  name.c_str(), micros, total.done, secs,
                  total.bytes > 0 ? std::to_string(mbps).c_str() : "null", total.found, f.threads);
    } else {
      std::string extra;
      if (total.bytes > 0) { char b[32]; std::snprintf(b, sizeof(b), "%6.1f MB/s", mbps); extra = b; }
      if (!total.message.empty()) extra += (extra.empty() ? "" : " ") + total.message;
      std::printf("%-12s : %11.3f micros/op;%s%s\n", name.c_str(), micros, extra.empty() ? "" : " ", extra.c_str());
    }
    std::fflush(stdout);
  }
  if (open) db.Close();
  return 0;
}

}  // namespace harness
