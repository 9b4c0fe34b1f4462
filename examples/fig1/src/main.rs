//! Runs the paper's Figure 1 kernel and checks it against the reference evaluator.

mod kernels;

use morello_core::reference::{HostTensor, compare, evaluate};
use morello_core::spec::Spec;

fn main() {
    let spec: Spec = kernels::FIG1_SPEC.parse().expect("the kernel's Spec parses");
    let operands = spec.operands();
    let mut args: Vec<HostTensor> = operands.iter().zip(1..).map(|(t, seed)| HostTensor::random(t, seed)).collect();
    let mut expected = args.clone();
    let tolerances = evaluate(spec.logical(), &mut expected);

    let lhs: Vec<f32> = args[0].to_elements();
    let rhs: Vec<f32> = args[1].to_elements();
    let mut out: Vec<f32> = args[2].to_elements();
    kernels::fig1(&lhs, &rhs, &mut out);
    args[2] = HostTensor::from_elements(&operands[2], &out);

    compare(spec.logical(), &expected, &args, &tolerances).expect("fig1 disagrees with the reference evaluator");
    println!("{}", kernels::FIG1_SPEC);
    println!("verified against the reference evaluator: out[0][0..4] = {:?}", &out[..4]);
}
