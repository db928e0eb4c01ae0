// The db_bench-style driver shared by the C/C++ peer harnesses written for Strata's
// benchmarks (bench/kyoto_bench.cc, bench/lmdb_bench.cc; bench/leveldb_bench.cc keeps its own
// copy of the same logic): the same workloads, flags, key format (%016ld), value generator
// (compressible 100-byte pieces, ratio 0.5), random seeds (Park-Miller, 301 for values and
// 1000+thread for keys) and output lines as `strata bench`, so engines compare workload by
// workload in one run. An engine implements `Store`; a workload it cannot express prints
// nothing (bench/db_bench.sh shows "-").

#pragma once

#include <chrono>
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

struct ValueGen {
  std::string data;
  size_t pos = 0;
  explicit ValueGen(double ratio) {
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
    else { std::fprintf(stderr, "unknown flag %s\n", a.c_str()); return 2; }
  }
  bool open = false;
  std::stringstream list(f.benchmarks);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (name.empty()) continue;
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
      if (f.json) std::printf("{\"benchmark\":\"open\",\"micros_per_op\":%.3f,\"ops\":%ld,\"seconds\":%.6f,\"mb_per_s\":null,\"found\":0,\"threads\":1}\n", micros, n, secs);
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
      std::printf("{\"benchmark\":\"%s\",\"micros_per_op\":%.3f,\"ops\":%ld,\"seconds\":%.6f,\"mb_per_s\":%s,\"found\":%ld,\"threads\":%ld}\n",
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
