/* From xnu libsyscall/mach/mach/vm_page_size.h: the kernel's page size, exported by libsystem
 * (16 KiB on Apple Silicon, 4 KiB on Intel); vm_size_t is uintptr_t (osfmk/mach/vm_types.h). */
#ifndef SB_DARWIN_VM_PAGE_SIZE_H
#define SB_DARWIN_VM_PAGE_SIZE_H
#include <stdint.h>
typedef uintptr_t vm_size_t;
extern vm_size_t vm_page_size;
extern vm_size_t vm_kernel_page_size;
#endif
