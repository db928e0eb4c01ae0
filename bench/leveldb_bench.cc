// A db_bench-style harness for Google's LevelDB (Debian libleveldb-dev), written for Strata's
// benchmarks: the same workloads, flags, key format (%016d), value generator (compressible
// 100-byte pieces, ratio 0.5), random seeds (Park-Miller, 301 for values and 1000+thread for
// keys) and output lines as `strata bench`, so the two are compared workload by workload in
// one run. Debian ships the library but not LevelDB's own db_bench binary; this harness calls
// the library directly (no Python or binding overhead). RucksDB's suite (put_100b, get_sstable,
// writes_during_flush, ...; bench/rucksdb.sh) runs through bench/harness.h on the same options,
// with an Env wrapper that sees background work (Env::Schedule) and memtable flushes (each
// completed flush removes the log it replaced).
//
// Build: g++ -O2 -std=c++17 bench/leveldb_bench.cc -lleveldb -lsnappy -lpthread -o leveldb_bench

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/write_batch.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace {

using Random = harness::Random;

// harness::ValueGen's values (made at a workload's first write) as leveldb::Slices.
struct ValueGen {
  harness::ValueGen gen;
  explicit ValueGen(double ratio) : gen(ratio) {}
  leveldb::Slice Generate(size_t len) {
    std::string_view v = gen.Generate(len);
    return leveldb::Slice(v.data(), v.size());
  }
};

struct Flags {
  std::string benchmarks = "fillseq,fillrandom,overwrite,readrandom,readseq";
  long num = 1000000, reads = -1, value_size = 100, cache_size = -1, bloom_bits = -1;
  long write_buffer_size = 0, max_file_size = 0, threads = 1;
  double compression_ratio = 0.5;
  std::string db = "/tmp/leveldb-dbbench", compression = "snappy";
  bool use_existing_db = false, json = false, histogram = false;
};

struct Stats {
  long done = 0, bytes = 0, found = 0;
  std::string message;
};

std::string Key(long k) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%016ld", k);
  return buf;
}

template <class F>  // Flags, or harness::Flags (RucksDB's suite)
leveldb::Options MakeOptions(const F& f, bool bulk) {
  leveldb::Options o;
  o.create_if_missing = true;
  o.compression = f.compression == "none" ? leveldb::kNoCompression : leveldb::kSnappyCompression;
  if (f.cache_size >= 0) o.block_cache = leveldb::NewLRUCache(f.cache_size);
  if (f.bloom_bits >= 0) o.filter_policy = leveldb::NewBloomFilterPolicy(f.bloom_bits);
  if (f.write_buffer_size > 0) o.write_buffer_size = f.write_buffer_size;
  if (f.max_file_size > 0) o.max_file_size = f.max_file_size;
  if (bulk && o.write_buffer_size < (64 << 20)) o.write_buffer_size = 64 << 20;
  return o;
}

Stats RunOne(const Flags& f, const std::string& name, leveldb::DB* db, int thread) {
  Random rnd(1000 + thread);
  ValueGen gen(f.compression_ratio);
  Stats st;
  long num = f.num, reads = f.reads < 0 ? f.num : f.reads;
  leveldb::WriteOptions w;
  leveldb::ReadOptions r;
  auto write = [&](bool seq, long n, long batch, long vsize, const leveldb::WriteOptions& wo) {
    for (long i = 0; i < n; i += batch) {
      leveldb::WriteBatch b;
      for (long j = 0; j < batch; j++) {
        long id = seq ? i + j : rnd.Uniform(num);
        std::string k = Key(id);
        b.Put(k, gen.Generate(vsize));
        st.bytes += vsize + k.size();
        st.done++;
      }
      leveldb::Status s = db->Write(wo, &b);
      if (!s.ok()) { std::fprintf(stderr, "put error: %s\n", s.ToString().c_str()); std::exit(1); }
    }
  };
  if (name == "fillseq") write(true, num, 1, f.value_size, w);
  else if (name == "fillrandom" || name == "overwrite") write(false, num, 1, f.value_size, w);
  else if (name == "fillbatch") write(true, num, 1000, f.value_size, w);
  else if (name == "fillsync") { leveldb::WriteOptions ws; ws.sync = true; write(false, num / 1000, 1, f.value_size, ws); }
  else if (name == "fill100K") write(false, num / 1000, 1, 100000, w);
  else if (name == "bulkload_seq" || name == "bulkload_random") write(name == "bulkload_seq", num, 1000, f.value_size, w);
  else if (name == "readseq" || name == "readreverse") {
    leveldb::Iterator* it = db->NewIterator(r);
    bool fwd = name == "readseq";
    for (fwd ? it->SeekToFirst() : it->SeekToLast(); it->Valid() && st.done < reads; fwd ? it->Next() : it->Prev()) {
      st.bytes += it->key().size() + it->value().size();
      st.done++;
    }
    delete it;
  } else if (name == "readrandom" || name == "readmissing" || name == "readhot") {
    long range = name == "readhot" ? (num + 99) / 100 : num;
    std::string value;
    for (long i = 0; i < reads; i++) {
      std::string k = Key(rnd.Uniform(range));
      if (name == "readmissing") k.push_back('.');
      if (db->Get(r, k, &value).ok()) st.found++;
      st.done++;
    }
    st.message = "(" + std::to_string(st.found) + " of " + std::to_string(reads) + " found)";
  } else if (name == "seekrandom") {
    leveldb::Iterator* it = db->NewIterator(r);
    for (long i = 0; i < reads; i++) {
      std::string k = Key(rnd.Uniform(num));
      it->Seek(k);
      if (it->Valid() && it->key() == k) st.found++;
      st.done++;
    }
    delete it;
    st.message = "(" + std::to_string(st.found) + " of " + std::to_string(reads) + " found)";
  } else if (name == "deleteseq" || name == "deleterandom") {
    for (long i = 0; i < num; i++) {
      db->Delete(w, Key(name == "deleteseq" ? i : rnd.Uniform(num)));
      st.done++;
    }
  } else if (name == "mixed") {
    std::string value;
    for (long i = 0; i < num; i++) {
      std::string k = Key(rnd.Uniform(num));
      if (i % 2 == 0) {
        if (db->Get(r, k, &value).ok()) st.found++;
      } else {
        leveldb::Slice v = gen.Generate(f.value_size);
        st.bytes += v.size() + k.size();
        db->Put(w, k, v);
      }
      st.done++;
    }
    st.message = "(" + std::to_string(st.found) + " of " + std::to_string((num + 1) / 2) + " reads found)";
  } else if (name == "compact") {
    if (thread == 0) { db->CompactRange(nullptr, nullptr); st.done = 1; }
  } else {
    std::fprintf(stderr, "unknown benchmark %s\n", name.c_str());
    std::exit(2);
  }
  return st;
}

/// Sees LevelDB's background work and memtable flushes from outside the library.
class WatchEnv : public leveldb::EnvWrapper {
 public:
  WatchEnv() : EnvWrapper(leveldb::Env::Default()) {}
  std::atomic<long> scheduled{0};     // background calls queued or running
  std::atomic<long> logs_removed{0};  // one per completed memtable flush
  void Schedule(void (*fn)(void*), void* arg) override {
    scheduled++;
    target()->Schedule(&WatchEnv::Run, new Job{fn, arg, this});
  }
  leveldb::Status RemoveFile(const std::string& f) override {
    if (f.size() > 4 && f.compare(f.size() - 4, 4, ".log") == 0) logs_removed++;
    return target()->RemoveFile(f);
  }

 private:
  struct Job {
    void (*fn)(void*);
    void* arg;
    WatchEnv* env;
  };
  static void Run(void* p) {
    Job* j = static_cast<Job*>(p);
    j->fn(j->arg);
    j->env->scheduled--;
    delete j;
  }
};

void Check(const leveldb::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s error: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

/// LevelDB as a harness::Store, for RucksDB's suite: the options of MakeOptions.
struct LevelStore : harness::Store {
  harness::Flags& f;
  WatchEnv* env = new WatchEnv;  // never freed: a background call may return through it at exit
  leveldb::DB* db = nullptr;
  leveldb::Options o;
  explicit LevelStore(harness::Flags& flags) : f(flags) {}
  void Open(bool fresh, bool bulk) override {
    o = MakeOptions(f, bulk);
    o.env = env;
    if (fresh) leveldb::DestroyDB(f.db, o);
    Check(leveldb::DB::Open(o, f.db, &db), "open");
  }
  void Close() override {
    delete db;
    db = nullptr;
    delete o.block_cache;
    delete o.filter_policy;
    o = leveldb::Options();
  }
  void Put(const std::string& k, std::string_view v, bool sync) override {
    leveldb::WriteOptions w;
    w.sync = sync;
    Check(db->Put(w, k, leveldb::Slice(v.data(), v.size())), "put");
  }
  void Write(const harness::Batch& batch, bool sync) override {
    leveldb::WriteBatch b;
    for (auto& [k, v] : batch) b.Put(k, leveldb::Slice(v.data(), v.size()));
    leveldb::WriteOptions w;
    w.sync = sync;
    Check(db->Write(w, &b), "write");
  }
  bool Get(const std::string& k, std::string* v) override {
    leveldb::Status s = db->Get(leveldb::ReadOptions(), k, v);
    if (s.IsNotFound()) return false;
    Check(s, "get");
    return true;
  }
  void Delete(const std::string& k) override { Check(db->Delete(leveldb::WriteOptions(), k), "delete"); }
  long Scan(bool forward, long limit, long* bytes) override {
    leveldb::Iterator* it = db->NewIterator(leveldb::ReadOptions());
    long n = 0;
    for (forward ? it->SeekToFirst() : it->SeekToLast(); it->Valid() && n < limit; forward ? it->Next() : it->Prev()) {
      *bytes += it->key().size() + it->value().size();
      n++;
    }
    Check(it->status(), "iterator");
    delete it;
    return n;
  }
  bool SeekFinds(const std::string& k) override {
    leveldb::Iterator* it = db->NewIterator(leveldb::ReadOptions());
    it->Seek(k);
    bool found = it->Valid() && it->key() == k;
    delete it;
    return found;
  }
  bool Compact() override {
    db->CompactRange(nullptr, nullptr);
    return true;
  }
  int BackgroundBusy() override { return env->scheduled.load(std::memory_order_relaxed) > 0; }
  long Flushes() override { return env->logs_removed.load(); }
  long TableFiles() override {
    long n = 0;
    std::string v;
    for (int level = 0; level < 7; level++) {
      if (db->GetProperty("leveldb.num-files-at-level" + std::to_string(level), &v)) n += std::atol(v.c_str());
    }
    return n;
  }
};

}  // namespace

int main(int argc, char** argv) {
  Flags f;
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
  if (f.compression != "snappy" && f.compression != "none") {
    std::fprintf(stderr, "Google LevelDB supports --compression=snappy|none\n");
    return 2;
  }
  // RucksDB's suite runs on bench/harness.h with the same flags.
  harness::Flags hf;
  hf.benchmarks = f.benchmarks;
  hf.num = f.num, hf.reads = f.reads, hf.value_size = f.value_size, hf.cache_size = f.cache_size;
  hf.bloom_bits = f.bloom_bits, hf.write_buffer_size = f.write_buffer_size, hf.max_file_size = f.max_file_size;
  hf.threads = f.threads, hf.compression_ratio = f.compression_ratio, hf.db = f.db, hf.compression = f.compression;
  hf.use_existing_db = f.use_existing_db, hf.json = f.json, hf.histogram = f.histogram;
  LevelStore store(hf);
  leveldb::DB* db = nullptr;
  if (!f.use_existing_db) leveldb::DestroyDB(f.db, leveldb::Options());
  std::stringstream list(f.benchmarks);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (name.empty()) continue;
    if (harness::IsRucks(name)) {  // a fresh database of its own
      if (f.use_existing_db) continue;
      delete db;
      db = nullptr;
      harness::RunRucks(hf, name, store);
      continue;
    }
    bool fresh = name.rfind("fill", 0) == 0 || name.rfind("bulkload", 0) == 0;
    if (fresh && f.use_existing_db) continue;
    if (name == "open") {
      // kvbench's open: the existing database opened and closed --reads times.
      delete db;
      db = nullptr;
      long n = f.reads < 0 ? f.num : f.reads;
      auto start = std::chrono::steady_clock::now();
      for (long i = 0; i < n; i++) {
        leveldb::DB* d = nullptr;
        leveldb::Status s = leveldb::DB::Open(MakeOptions(f, false), f.db, &d);
        if (!s.ok()) { std::fprintf(stderr, "open error: %s\n", s.ToString().c_str()); return 1; }
        delete d;
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double micros = secs * 1e6 / (n > 0 ? n : 1);
      if (f.json) std::printf("{\"benchmark\":\"open\",\"micros_per_op\":%.3f,\"ops\":%ld,\"seconds\":%.6f,\"mb_per_s\":null,\"found\":0,\"threads\":1,\"latency\":null}\n", micros, n, secs);
      else std::printf("%-12s : %11.3f micros/op;\n", "open", micros);
      std::fflush(stdout);
      continue;
    }
    if (fresh || db == nullptr) {
      delete db;
      db = nullptr;
      if (fresh) leveldb::DestroyDB(f.db, leveldb::Options());
      leveldb::Status s = leveldb::DB::Open(MakeOptions(f, name.rfind("bulkload", 0) == 0), f.db, &db);
      if (!s.ok()) { std::fprintf(stderr, "open error: %s\n", s.ToString().c_str()); return 1; }
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
      if (total.message.empty()) total.message = s.message;
    }
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
  delete db;
  return 0;
}
