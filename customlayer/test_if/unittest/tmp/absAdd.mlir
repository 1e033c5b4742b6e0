{
 "tpu_sdk_net": 1,
 "chip": "bm1684x",
 "input_file": "/work/main/customlayer/test_if/unittest/tmp/absAdd_in_f32.npz",
 "net": {
  "name": "absAdd",
  "inputs": [
   {
    "name": "in",
    "shape": [
     4,
     32,
     36,
     36
    ],
    "dtype": "fp32"
   }
  ],
  "layers": [
   {
    "op": "absadd",
    "params": {
     "b": 1.2
    },
    "inputs": [
     "in"
    ],
    "outputs": [
     "absadd_out0_1"
    ]
   }
  ],
  "outputs": [
   "absadd_out0_1"
  ]
 }
}