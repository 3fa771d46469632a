//===- HostLibrary.cpp - host code to a shared library --------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Target/HostLibrary.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <vector>

#ifndef CROQ_RUNTIME_SOURCE_DIR
#define CROQ_RUNTIME_SOURCE_DIR ""
#endif

using namespace mlir;
using namespace llvm;

std::string croq::findCudaToolkit(StringRef requested) {
  if (!requested.empty())
    return requested.str();
  for (const char *var : {"CUDA_PATH", "CUDA_HOME"})
    if (std::optional<std::string> dir = sys::Process::GetEnv(var))
      return *dir;
  return "/usr/local/cuda";
}

static bool exists(const Twine &path) { return sys::fs::exists(path); }

/// The runtime sources: the requested directory, share/croq/runtime of the
/// install `executable` belongs to, or the source tree's.
static std::optional<std::string>
findRuntime(const croq::HostLibraryOptions &options) {
  SmallVector<std::string> candidates;
  if (!options.runtimeDir.empty())
    candidates.push_back(options.runtimeDir);
  if (!options.executable.empty()) {
    SmallString<256> installed(
        sys::path::parent_path(sys::path::parent_path(options.executable)));
    sys::path::append(installed, "share", "croq", "runtime");
    candidates.push_back(std::string(installed));
  }
  candidates.push_back(CROQ_RUNTIME_SOURCE_DIR);
  for (const std::string &dir : candidates)
    if (!dir.empty() && exists(dir + "/include/croq_runtime.h") &&
        exists(dir + "/lib/croq_runtime.cpp"))
      return dir;
  return std::nullopt;
}

LogicalResult croq::buildHostLibrary(StringRef hostCode, StringRef output,
                                     const HostLibraryOptions &options,
                                     std::string &error) {
  auto fail = [&](const Twine &message) {
    error = message.str();
    return failure();
  };
  std::string toolkit = findCudaToolkit(options.toolkit);
  if (!exists(toolkit + "/include/cuda.h"))
    return fail("no CUDA toolkit at " + toolkit +
                " (no include/cuda.h); name one (--cuda-path=DIR) or set "
                "CUDA_PATH");
  std::optional<std::string> runtime = findRuntime(options);
  if (!runtime)
    return fail("cannot find the croq runtime (include/croq_runtime.h and "
                "lib/croq_runtime.cpp); name its directory (--runtime-dir)");
  std::string compiler = options.compiler;
  if (compiler.empty() && exists(toolkit + "/bin/nvcc"))
    compiler = toolkit + "/bin/nvcc";
  if (compiler.empty())
    for (StringRef name : {"clang++", "clang++-22", "c++", "g++"})
      if (ErrorOr<std::string> found = sys::findProgramByName(name)) {
        compiler = *found;
        break;
      }
  if (compiler.empty())
    return fail("no compiler for the host library: neither " + toolkit +
                "/bin/nvcc nor clang++, c++ or g++ on PATH; name one "
                "(--cxx=PATH)");
  if (!sys::fs::can_execute(compiler))
    if (ErrorOr<std::string> found = sys::findProgramByName(compiler))
      compiler = *found;
  if (!sys::fs::can_execute(compiler))
    return fail("the host compiler '" + compiler + "' is not an executable");

  SmallString<128> dir;
  if (std::error_code ec = sys::fs::createUniqueDirectory("croq-host", dir))
    return fail("cannot create a temporary directory: " + ec.message());
  std::string source = (dir + "/host.cpp").str();
  {
    std::error_code ec;
    raw_fd_ostream os(source, ec);
    if (ec)
      return fail("cannot write " + source + ": " + ec.message());
    os << hostCode;
  }
  bool nvcc = sys::path::stem(compiler) == "nvcc";
  std::vector<std::string> args{compiler, "-O2", "-std=c++17", "-shared"};
  if (nvcc)
    args.insert(args.end(), {"-Xcompiler", "-fPIC"});
  else
    args.insert(args.end(), {"-fPIC", "-I" + toolkit + "/include"});
  args.insert(args.end(), {"-I" + *runtime + "/include", source,
                           *runtime + "/lib/croq_runtime.cpp"});
  if (!nvcc)
    args.insert(args.end(),
                {"-L" + toolkit + "/lib64", "-L" + toolkit + "/lib64/stubs"});
  args.insert(args.end(), {"-lcuda", "-o", output.str()});
  SmallVector<StringRef> refs(args.begin(), args.end());
  if (options.verbose) {
    for (StringRef a : refs)
      errs() << a << " ";
    errs() << "\n";
  }
  std::string message;
  int rc = sys::ExecuteAndWait(refs.front(), refs, std::nullopt, {}, 0, 0,
                               &message);
  if (options.keepTemps)
    errs() << "croq: host code kept in " << source << "\n";
  else
    sys::fs::remove_directories(dir);
  if (rc != 0)
    return fail(sys::path::filename(compiler) + " failed building " + output +
                (message.empty() ? " (exit " + Twine(rc) + ")"
                                 : ": " + Twine(message)));
  return success();
}
