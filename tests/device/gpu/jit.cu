// SPDX-License-Identifier: MIT
// jit.cu - the library's PTX JIT-linked with nvJitLink, loaded and run;
// line information and the seq_cst SASS of that cubin (nvdisasm).
#include "gpu_test.h"
#include "gdirect_jitlink.h"

#include <cuda.h>
#include <nvJitLink.h>

#include <unistd.h>

// One function's SASS out of nvdisasm's listing: from its section
// directive (.section .text.NAME,"ax",...) to the next section.
static std::string sass_of(const std::string &dis, const char *fn)
{
	std::string label = std::string(".text.") + fn + ",";
	size_t start = dis.find(label);

	if (start == std::string::npos)
		return std::string();
	size_t end = dis.find(".section", start + 1);
	return dis.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

void test_jit(const char *ptxdir, const char *caller)
{
	static const char *lib[] = { "flag.ptx", "seq_cst.ptx", "ring.ptx" };
	struct gdirect_jit_input in[4];
	char *bufs[4] = {};
	char paths[3][1024];
	int major = 0, minor = 0;
	size_t i;

	CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
	CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
	char arch[16];
	snprintf(arch, sizeof(arch), "sm_%d%d", major, minor);
	for (i = 0; i < 4; i++) {
		const char *path = caller;
		size_t size = 0;

		if (i < 3) {
			snprintf(paths[i], sizeof(paths[i]), "%s/%s", ptxdir, lib[i]);
			path = paths[i];
		}
		bufs[i] = gdirect_jit_slurp(path, &size);
		if (!bufs[i]) {
			check(false, "nvJitLink: cannot read %s", path);
			return;
		}
		in[i] = { path, NVJITLINK_INPUT_PTX, bufs[i], size };
	}
	void *cubin = nullptr;
	size_t cubin_size = 0;
	char *log = nullptr;
	int rc = gdirect_jitlink(arch, in, 4, &cubin, &cubin_size, &log);
	if (rc)
		show(log);
	check(rc == 0, "nvJitLink links all_calls.ptx + library PTX for %s (%zu bytes)", arch, cubin_size);
	free(log);
	for (i = 0; i < 4; i++)
		free(bufs[i]);
	if (rc)
		return;

	// Load and run it: every function once, on prepared memory.
	CUmodule mod;
	CUfunction fn;
	CUresult r = cuModuleLoadData(&mod, cubin);
	check(r == CUDA_SUCCESS, "cuModuleLoadData of the JIT-linked cubin (%d)", (int)r);
	if (r == CUDA_SUCCESS) {
		uint32_t *f32;
		uint64_t *f64;
		unsigned char *buf;
		int *out;
		uint32_t h32[8] = { 1 };
		uint64_t h64[8] = { 1 };
		unsigned char hbuf[1024] = {};
		int hout[16];
		uint64_t one = 1;

		for (i = 0; i < 56; i++)
			hbuf[i] = (unsigned char)(i * 3 + 1);
		memcpy(hbuf + 56, &one, 8);	// slot 0 holds message 0
		CUDA_OK(cudaMalloc(&f32, sizeof(h32)));
		CUDA_OK(cudaMalloc(&f64, sizeof(h64)));
		CUDA_OK(cudaMalloc(&buf, sizeof(hbuf)));
		CUDA_OK(cudaMalloc(&out, sizeof(hout)));
		CUDA_OK(cudaMemcpy(f32, h32, sizeof(h32), cudaMemcpyHostToDevice));
		CUDA_OK(cudaMemcpy(f64, h64, sizeof(h64), cudaMemcpyHostToDevice));
		CUDA_OK(cudaMemcpy(buf, hbuf, sizeof(hbuf), cudaMemcpyHostToDevice));
		CUDA_OK(cudaMemset(out, 0xff, sizeof(hout)));
		void *args[] = { &f32, &f64, &buf, &out };
		r = cuModuleGetFunction(&fn, mod, "gdirect_all_calls");
		if (r == CUDA_SUCCESS)
			r = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, 0, args, nullptr);
		if (r == CUDA_SUCCESS)
			r = cuCtxSynchronize();
		CUDA_OK(cudaMemcpy(hout, out, sizeof(hout), cudaMemcpyDeviceToHost));
		CUDA_OK(cudaMemcpy(h32, f32, sizeof(h32), cudaMemcpyDeviceToHost));
		CUDA_OK(cudaMemcpy(h64, f64, sizeof(h64), cudaMemcpyDeviceToHost));
		CUDA_OK(cudaMemcpy(hbuf, buf, sizeof(hbuf), cudaMemcpyDeviceToHost));
		bool ok = r == CUDA_SUCCESS && hout[0] == 0 && hout[1] == 0 &&
			  hout[2] == 1 && hout[3] == 1 && hout[4] == 0 &&
			  hout[5] == 0 && hout[6] == 0 && hout[7] == 0 &&
			  hout[8] == 0 && hout[9] == 0 && hout[10] == 0 &&
			  h32[1] == 2 && h64[1] == 2 && h32[2] == 3 && h64[2] == 3 &&
			  h32[3] == 1 && h64[3] == 1 && h32[4] == 5 && h64[4] == 5 &&
			  h32[5] == 6 && h64[5] == 6 && !memcmp(hbuf + 512, hbuf, 32);
		check(ok, "JIT-linked kernel calls every library function correctly (launch %d)", (int)r);
		cudaFree(f32);
		cudaFree(f64);
		cudaFree(buf);
		cudaFree(out);
		cuModuleUnload(mod);
	}

	// Line information and the seq_cst mapping, as the GPU runs it.
	char tmpl[] = "/tmp/gdirect-jit-XXXXXX";
	int fd = mkstemp(tmpl);
	bool wrote = fd >= 0 && write(fd, cubin, cubin_size) == (ssize_t)cubin_size;
	if (fd >= 0)
		close(fd);
	std::string out;
	if (!wrote || !run_tool("nvdisasm --version", out)) {
		skip("line information and SASS", "nvdisasm not found or no temp file");
	} else {
		run_tool(std::string("nvdisasm -g ") + tmpl, out);
		check(out.find("flag.ptx") != std::string::npos &&
			      out.find("ring.ptx") != std::string::npos &&
			      out.find("seq_cst.ptx") != std::string::npos,
		      "nvdisasm -g shows PTX line information (.loc) for each file");
		run_tool(std::string("nvdisasm ") + tmpl, out);
		std::string fence = sass_of(out, "gdirect_fence_sc");
		std::string load = sass_of(out, "gdirect_load_sc_u32");
		check(fence.find("MEMBAR.SC.SYS") != std::string::npos,
		      "fence.sc.sys is MEMBAR.SC.SYS in SASS");
		check(load.find("MEMBAR.SC.SYS") != std::string::npos &&
			      load.find("LD.E.STRONG.SYS") != std::string::npos,
		      "load_sc is MEMBAR.SC.SYS + LD.E.STRONG.SYS in SASS");
		if (load.find("MEMBAR.SC.SYS") == std::string::npos)
			show(load.empty() ? out.substr(0, 2000) : load);
	}
	unlink(tmpl);
	free(cubin);
}
