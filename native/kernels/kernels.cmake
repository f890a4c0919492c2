# The embedded kernels: nxvk_kernel(NAME SOURCE [DEFINES...]).
nxvk_kernel(fill fill.comp)
nxvk_kernel(copy copy.comp)
nxvk_kernel(add_f32 add_f32.comp)
nxvk_kernel(sum_f32 sum_f32.comp)
nxvk_kernel(copy_vec4 copy_vec4.comp)
