//! Runs the synthesized 16³ Matmul and checks it against the reference evaluator.

mod kernels;

use morello_core::reference::{HostTensor, compare, evaluate};
use morello_core::spec::Spec;

fn main() {
    let spec: Spec = kernels::MATMUL16_SPEC.parse().expect("the kernel's Spec parses");
    let operands = spec.operands();
    let mut args: Vec<HostTensor> = operands.iter().zip(1..).map(|(t, seed)| HostTensor::random(t, seed)).collect();
    let mut expected = args.clone();
    let tolerances = evaluate(spec.logical(), &mut expected);
    let a: Vec<f32> = args[0].to_elements();
    let b: Vec<f32> = args[1].to_elements();
    let mut c = vec![f32::NAN; 256];
    kernels::matmul16(&a, &b, &mut c);
    args[2] = HostTensor::from_elements(&operands[2], &c);
    compare(spec.logical(), &expected, &args, &tolerances).expect("matmul16 disagrees with the reference evaluator");
    println!("{}", kernels::MATMUL16_SPEC);
    println!("verified against the reference evaluator: out[0][0..4] = {:?}", &c[..4]);
}
