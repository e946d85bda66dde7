//! Which frames of a call stack are the user's own code.
//!
//! Every family names the source line that holds memory by the first *user* frame of its stack
//! (outside site-packages, the Python standard library, torch, torch_npu and pseudo-files such as
//! `<string>`), not the innermost frame, which is almost always inside torch. The rule lives here,
//! below the families, so each applies the same one to its own frame format.

/// True for a source path inside a library: site-packages, the standard library, torch,
/// torch_npu, or a pseudo-file like `<string>` (and an empty path).
pub fn is_library_path(path: &str) -> bool {
    let p = path.trim().replace('\\', "/");
    if p.starts_with('<') || p.is_empty() {
        return true;
    }
    p.contains("site-packages/")
        || p.contains("dist-packages/")
        || p.contains("/torch/")
        || p.contains("/torch_npu/")
        || p.starts_with("torch/")
        || p.starts_with("torch_npu/")
        // The standard library (lib/python3.x/…) is not user code either.
        || p.contains("/lib/python")
        || p.contains("/lib64/python")
}

/// True for a Python source file (native frames name C/C++ files, `??` or nothing).
pub fn is_python_source(path: &str) -> bool {
    path.trim_end().ends_with(".py")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libraries_and_user_code() {
        for lib in [
            "/h/.local/lib/python3.9/site-packages/torch/_utils.py",
            "/usr/lib/python3/dist-packages/numpy/core.py",
            "/h/miniconda3/lib/python3.9/multiprocessing/queues.py",
            "torch/nn/modules/module.py",
            "<string>",
            "",
            "C:\\py\\Lib\\site-packages\\torch\\nn.py",
        ] {
            assert!(is_library_path(lib), "{lib}");
        }
        for user in [
            "/h/imagenet_script/main.py",
            "/home/lin/cs336/assignment2-systems/cs336-basics/cs336_basics/model.py",
        ] {
            assert!(!is_library_path(user), "{user}");
        }
        assert!(is_python_source("/a/model.py"));
        assert!(!is_python_source("CUDACachingAllocator.cpp"));
        assert!(!is_python_source("??"));
    }
}
