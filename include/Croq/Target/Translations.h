//===- Translations.h - croq translations -----------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_TARGET_TRANSLATIONS_H
#define CROQ_TARGET_TRANSLATIONS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class ModuleOp;

namespace croq {

/// Writes C++ host code for a module lowered by the croq-to-nvvm pipeline
/// (with serialized gpu.binary ops): the kernel images, and one
/// `extern "C" int f(...)` entry point per host function that checks its
/// arguments and launches the kernels through the croq runtime.
/// A serialized kernel module: its symbol and its PTX text or cubin.
struct KernelImage {
  StringRef module;
  StringRef image;
};

/// The images gpu-module-to-binary left in `module` (croq-to-nvvm leaves
/// one, holding every kernel).
SmallVector<KernelImage> getKernelImages(ModuleOp module);

/// C++ host code with the module's serialized kernels embedded: one
/// `extern "C"` entry point per host function.
LogicalResult emitHostCode(ModuleOp module, raw_ostream &os);

/// The C prototypes of emitHostCode's entry points, with their parameters'
/// Croqtile names.
LogicalResult emitHostHeader(ModuleOp module, raw_ostream &os);

/// The entry points of emitHostCode as JSON: per function its name, its
/// parameters in C order (a tensor's name, element dtype and static shape,
/// -1 where the extent is passed; a scalar's C type; a stream) and its
/// scalar results' C types. Bindings in other languages build calls from it.
LogicalResult describeEntryPoints(ModuleOp module, raw_ostream &os);

/// Registers `--croq-to-ptx`, `--croq-to-cubin` and `--croq-to-host`.
void registerCroqTranslations();

} // namespace croq
} // namespace mlir

#endif // CROQ_TARGET_TRANSLATIONS_H
