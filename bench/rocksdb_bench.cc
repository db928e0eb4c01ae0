// A db_bench-style harness for RocksDB (Debian librocksdb-dev), a peer baseline for Strata's
// benchmarks: the same workloads, flags, key format (%016d), value generator (compressible
// 100-byte pieces, ratio 0.5), random seeds (Park-Miller, 301 for values and 1000+thread for
// keys) and output lines as `strata bench` and bench/leveldb_bench.cc, so the engines are
// compared workload by workload in one run (bench/db_bench.sh).
//
// Options: RocksDB's own defaults (64 MB write buffer, 64 MB target file size, 4 KB blocks,
// background jobs, max_open_files=-1 ...), not LevelDB's, except what the flags set, matching
// leveldb_bench.cc: Snappy or no compression (--compression=snappy|none), an LRU block cache of
// LevelDB's default 8 MB or --cache_size bytes, a Bloom filter of --bloom_bits bits per key only
// when the flag is given, --write_buffer_size, and --max_file_size as target_file_size_base.
// bulkload_seq/bulkload_random: WAL off (WriteOptions::disableWAL) and auto-compactions off
// (Options::disable_auto_compactions, L0 slowdown/stop triggers out of reach), write buffer at
// least 64 MB; after the timed load the memtable is flushed and the database closed (untimed),
// as `strata bench` does, so the next workload reopens it with the normal options.
//
// RucksDB's suite (put_100b, get_sstable, writes_during_flush, ...; bench/rucksdb.sh) runs
// through bench/harness.h on the same options, with an EventListener that sees flushes and
// compactions from their begin to their completion callbacks.
//
// Build: g++ -O2 -Wall -std=c++17 bench/rocksdb_bench.cc -lrocksdb -lpthread -o rocksdb_bench

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

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

// harness::ValueGen's values (made at a workload's first write) as rocksdb::Slices.
struct ValueGen {
  harness::ValueGen gen;
  explicit ValueGen(double ratio) : gen(ratio) {}
  rocksdb::Slice Generate(size_t len) {
    std::string_view v = gen.Generate(len);
    return rocksdb::Slice(v.data(), v.size());
  }
};

struct Flags {
  std::string benchmarks = "fillseq,fillrandom,overwrite,readrandom,readseq";
  long num = 1000000, reads = -1, value_size = 100, cache_size = -1, bloom_bits = -1;
  long write_buffer_size = 0, max_file_size = 0, threads = 1;
  double compression_ratio = 0.5;
  std::string db = "/tmp/rocksdb-dbbench", compression = "snappy";
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

bool IsBulk(const std::string& name) { return name.rfind("bulkload", 0) == 0; }

template <class F>  // Flags, or harness::Flags (RucksDB's suite)
rocksdb::Options MakeOptions(const F& f, bool bulk) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.compression = f.compression == "none" ? rocksdb::kNoCompression : rocksdb::kSnappyCompression;
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = rocksdb::NewLRUCache(f.cache_size >= 0 ? f.cache_size : 8 << 20);
  if (f.bloom_bits >= 0) t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(f.bloom_bits));
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  if (f.write_buffer_size > 0) o.write_buffer_size = f.write_buffer_size;
  if (f.max_file_size > 0) o.target_file_size_base = f.max_file_size;
  if (bulk) {
    o.disable_auto_compactions = true;
    o.level0_slowdown_writes_trigger = 1 << 30;
    o.level0_stop_writes_trigger = 1 << 30;
    if (o.write_buffer_size < (64u << 20)) o.write_buffer_size = 64 << 20;
  }
  return o;
}

void Check(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s error: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

Stats RunOne(const Flags& f, const std::string& name, rocksdb::DB* db, int thread) {
  Random rnd(1000 + thread);
  ValueGen gen(f.compression_ratio);
  Stats st;
  long num = f.num, reads = f.reads < 0 ? f.num : f.reads;
  rocksdb::WriteOptions w;
  rocksdb::ReadOptions r;
  auto write = [&](bool seq, long n, long batch, long vsize, const rocksdb::WriteOptions& wo) {
    for (long i = 0; i < n; i += batch) {
      rocksdb::WriteBatch b;
      for (long j = 0; j < batch; j++) {
        long id = seq ? i + j : rnd.Uniform(num);
        std::string k = Key(id);
        b.Put(k, gen.Generate(vsize));
        st.bytes += vsize + k.size();
        st.done++;
      }
      Check(db->Write(wo, &b), "put");
    }
  };
  if (name == "fillseq") write(true, num, 1, f.value_size, w);
  else if (name == "fillrandom" || name == "overwrite") write(false, num, 1, f.value_size, w);
  else if (name == "fillbatch") write(true, num, 1000, f.value_size, w);
  else if (name == "fillsync") { rocksdb::WriteOptions ws; ws.sync = true; write(false, num / 1000, 1, f.value_size, ws); }
  else if (name == "fill100K") write(false, num / 1000, 1, 100000, w);
  else if (IsBulk(name)) {
    rocksdb::WriteOptions wb;
    wb.disableWAL = true;
    write(name == "bulkload_seq", num, 1000, f.value_size, wb);
  } else if (name == "readseq" || name == "readreverse") {
    rocksdb::Iterator* it = db->NewIterator(r);
    bool fwd = name == "readseq";
    for (fwd ? it->SeekToFirst() : it->SeekToLast(); it->Valid() && st.done < reads; fwd ? it->Next() : it->Prev()) {
      st.bytes += it->key().size() + it->value().size();
      st.done++;
    }
    Check(it->status(), "iterator");
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
    rocksdb::Iterator* it = db->NewIterator(r);
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
      Check(db->Delete(w, Key(name == "deleteseq" ? i : rnd.Uniform(num))), "delete");
      st.done++;
    }
  } else if (name == "mixed") {
    std::string value;
    for (long i = 0; i < num; i++) {
      std::string k = Key(rnd.Uniform(num));
      if (i % 2 == 0) {
        if (db->Get(r, k, &value).ok()) st.found++;
      } else {
        rocksdb::Slice v = gen.Generate(f.value_size);
        st.bytes += v.size() + k.size();
        Check(db->Put(w, k, v), "put");
      }
      st.done++;
    }
    st.message = "(" + std::to_string(st.found) + " of " + std::to_string((num + 1) / 2) + " reads found)";
  } else if (name == "compact") {
    if (thread == 0) { Check(db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr), "compact"); st.done = 1; }
  } else {
    std::fprintf(stderr, "unknown benchmark %s\n", name.c_str());
    std::exit(2);
  }
  return st;
}

/// Sees RocksDB's flushes and compactions through its listener callbacks.
struct Watch : rocksdb::EventListener {
  std::atomic<long> running{0};  // flushes and compactions between begin and completion
  std::atomic<long> flushes{0};  // completed
  void OnFlushBegin(rocksdb::DB*, const rocksdb::FlushJobInfo&) override { running++; }
  void OnFlushCompleted(rocksdb::DB*, const rocksdb::FlushJobInfo&) override {
    flushes++;
    running--;
  }
  void OnCompactionBegin(rocksdb::DB*, const rocksdb::CompactionJobInfo&) override { running++; }
  void OnCompactionCompleted(rocksdb::DB*, const rocksdb::CompactionJobInfo&) override { running--; }
};

/// RocksDB as a harness::Store, for RucksDB's suite: the options of MakeOptions.
struct RocksStore : harness::Store {
  harness::Flags& f;
  std::shared_ptr<Watch> watch = std::make_shared<Watch>();
  rocksdb::DB* db = nullptr;
  explicit RocksStore(harness::Flags& flags) : f(flags) {}
  void Open(bool fresh, bool bulk) override {
    rocksdb::Options o = MakeOptions(f, bulk);
    o.listeners.push_back(watch);
    if (fresh) rocksdb::DestroyDB(f.db, o);
    Check(rocksdb::DB::Open(o, f.db, &db), "open");
  }
  void Close() override {
    if (db) Check(db->Close(), "close");
    delete db;
    db = nullptr;
  }
  void Put(const std::string& k, std::string_view v, bool sync) override {
    rocksdb::WriteOptions w;
    w.sync = sync;
    Check(db->Put(w, k, rocksdb::Slice(v.data(), v.size())), "put");
  }
  void Write(const harness::Batch& batch, bool sync) override {
    rocksdb::WriteBatch b;
    for (auto& [k, v] : batch) b.Put(k, rocksdb::Slice(v.data(), v.size()));
    rocksdb::WriteOptions w;
    w.sync = sync;
    Check(db->Write(w, &b), "write");
  }
  bool Get(const std::string& k, std::string* v) override {
    rocksdb::Status s = db->Get(rocksdb::ReadOptions(), k, v);
    if (s.IsNotFound()) return false;
    Check(s, "get");
    return true;
  }
  void Delete(const std::string& k) override { Check(db->Delete(rocksdb::WriteOptions(), k), "delete"); }
  long Scan(bool forward, long limit, long* bytes) override {
    rocksdb::Iterator* it = db->NewIterator(rocksdb::ReadOptions());
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
    rocksdb::Iterator* it = db->NewIterator(rocksdb::ReadOptions());
    it->Seek(k);
    bool found = it->Valid() && it->key() == k;
    delete it;
    return found;
  }
  bool Compact() override {
    Check(db->Flush(rocksdb::FlushOptions()), "flush");
    Check(db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr), "compact");
    return true;
  }
  int BackgroundBusy() override { return watch->running.load(std::memory_order_relaxed) > 0; }
  long Flushes() override { return watch->flushes.load(); }
  long TableFiles() override {
    long n = 0;
    std::string v;
    for (int level = 0; level < db->NumberLevels(); level++) {
      if (db->GetProperty("rocksdb.num-files-at-level" + std::to_string(level), &v)) n += std::atol(v.c_str());
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
    std::fprintf(stderr, "rocksdb_bench supports --compression=snappy|none\n");
    return 2;
  }
  // RucksDB's suite runs on bench/harness.h with the same flags.
  harness::Flags hf;
  hf.benchmarks = f.benchmarks;
  hf.num = f.num, hf.reads = f.reads, hf.value_size = f.value_size, hf.cache_size = f.cache_size;
  hf.bloom_bits = f.bloom_bits, hf.write_buffer_size = f.write_buffer_size, hf.max_file_size = f.max_file_size;
  hf.threads = f.threads, hf.compression_ratio = f.compression_ratio, hf.db = f.db, hf.compression = f.compression;
  hf.use_existing_db = f.use_existing_db, hf.json = f.json, hf.histogram = f.histogram;
  RocksStore store(hf);
  rocksdb::DB* db = nullptr;
  if (!f.use_existing_db) rocksdb::DestroyDB(f.db, rocksdb::Options());
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
    bool fresh = name.rfind("fill", 0) == 0 || IsBulk(name);
    if (fresh && f.use_existing_db) continue;
    if (fresh || db == nullptr) {
      delete db;
      db = nullptr;
      if (fresh) rocksdb::DestroyDB(f.db, rocksdb::Options());
      Check(rocksdb::DB::Open(MakeOptions(f, IsBulk(name)), f.db, &db), "open");
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
    if (IsBulk(name)) {
      // The load skipped the log: make it durable (untimed) and reopen with normal options.
      Check(db->Flush(rocksdb::FlushOptions()), "flush");
      delete db;
      db = nullptr;
    }
  }
  delete db;
  return 0;
}
