// WorkThread: one thread running queued jobs in order, for slow work that
// must stay off an io thread (a worker's block commits, its block
// deletions). Stop (or the destructor) runs every job already queued, then
// joins; jobs posted after Stop are dropped.
// Thread-safety: Post and Stop may be called from any thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace copse {

class WorkThread {
 public:
  WorkThread();
  ~WorkThread();
  WorkThread(const WorkThread&) = delete;
  WorkThread& operator=(const WorkThread&) = delete;

  void Post(std::function<void()> job);
  // Runs what is queued, then joins. Idempotent.
  void Stop();

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;  // GUARDED_BY(mu_)
  bool stop_ = false;                       // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace copse
