-- SPDX-License-Identifier: Apache-2.0
-- cli_filter.lua - kerf's workload-type route for Slurm (docs/CLUSTER.md "Workload route").
-- Install as cli_filter.lua next to slurm.conf with CliFilterPlugins=lua. It runs in the
-- client (srun, sbatch, salloc alike), so a bare srun gets the same gres as a batch job: a
-- job_submit rewrite alone breaks bare srun (the step asks for the gres the job lost).
--
-- --kerf-workload=W --kerf-tier=T (options of spank_kerf.so) without --gres/--gpus becomes
-- the gres below, after kerf's policy table (docs/SCHEDULER.md "Routes"): training gets whole
-- GPUs; inference a reserved share (a MIG type where the site lists one, else shards, which
-- spank_kerf.so turns into a slice with the shards' memory and compute); dev and batch small
-- shares. An explicit --gres or --gpus is never changed. Edit the table for your site.

local SHARDS_PER_GPU = 4 -- keep equal to spank_kerf.so's shards_per_gpu= in plugstack.conf

-- ROUTES[workload][tier] = gres request; "half"/"quarter" are shares of one GPU in shards
local function shards(frac)
   local n = math.floor(SHARDS_PER_GPU * frac)
   if n < 1 then n = 1 end
   return "shard:" .. n
end

local ROUTES = {
   training  = { high = "gpu:1", queueable = "gpu:1", exploratory = "gpu:1" },
   -- a site with MIG typed gres may put e.g. "gpu:3g.71gb:1" for inference/high
   inference = { high = shards(1 / 2), queueable = shards(1 / 4), exploratory = shards(1 / 4) },
   dev       = { high = shards(1 / 4), queueable = shards(1 / 4), exploratory = shards(1 / 4) },
   batch     = { high = shards(1 / 4), queueable = shards(1 / 4), exploratory = shards(1 / 4) },
}

local function spank_opt(options, name)
   local sp = options["spank"]
   if sp == nil then return nil end
   for _, plugin in pairs(sp) do
      if type(plugin) == "table" and plugin[name] ~= nil then return plugin[name] end
   end
   return nil
end

local function empty(v)
   return v == nil or v == "" or v == "0"
end

function slurm_cli_setup_defaults(options, early_pass)
   return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
   local workload = spank_opt(options, "kerf-workload")
   if workload == nil then return slurm.SUCCESS end
   local tier = spank_opt(options, "kerf-tier") or "queueable"
   local row = ROUTES[workload]
   if row == nil or row[tier] == nil then
      slurm.log_error("kerf: no gres route for --kerf-workload=%s --kerf-tier=%s",
                      tostring(workload), tostring(tier))
      return slurm.ERROR
   end
   if not empty(options["gres"]) or not empty(options["gpus"]) then
      return slurm.SUCCESS -- the user named the gres: kept as asked
   end
   options["gres"] = row[tier]
   slurm.log_verbose("kerf: --kerf-workload=%s --kerf-tier=%s -> --gres=%s", workload, tier,
                     row[tier])
   return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, jobid, stepid)
   return slurm.SUCCESS
end
